package mock

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newDriver returns a driver whose tasks are killed when the test ends.
func newDriver(t *testing.T) *Driver {
	t.Helper()
	d := New(nil)
	t.Cleanup(d.Shutdown)
	return d
}

// runForever is the config of a task that runs until stopped (for the
// test's life): without run_for a mock task exits at once.
var runForever = map[string]any{"run_for": "1h"}

func taskConfig(t *testing.T, id string, conf map[string]any) *drivers.TaskConfig {
	t.Helper()
	raw, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	return &drivers.TaskConfig{ID: id, Name: "web", AllocID: "a1", RawConfig: raw}
}

func start(t *testing.T, d *Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	return h
}

// waitExit waits (up to 10s) for the task's ExitResult.
func waitExit(t *testing.T, d *Driver, id string) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := d.WaitTask(ctx, id)
	if err != nil {
		t.Fatalf("WaitTask: %v", err)
	}
	res, ok := <-ch
	if !ok || res == nil {
		t.Fatalf("WaitTask closed without a result (ctx err %v)", ctx.Err())
	}
	return res
}

func TestDriver_Basics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		if d.Name() != "mock_driver" {
			t.Fatalf("Name = %q", d.Name())
		}
		if c := d.Capabilities(); !c.SendSignals || !c.Exec || c.FSIsolation != "none" {
			t.Fatalf("Capabilities = %+v", c)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := d.Fingerprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fp := <-ch
		if fp.Health != drivers.HealthStateHealthy || fp.Attributes["driver.mock_driver"] != "1" {
			t.Fatalf("fingerprint = %+v", fp)
		}
		cancel()
		if _, ok := <-ch; ok {
			t.Fatal("fingerprint channel not closed after cancel")
		}
	})
}

func TestDriver_RunForExit(t *testing.T) {
	cases := []struct {
		name string
		conf map[string]any
		want drivers.ExitResult
		err  string
	}{
		{"success", map[string]any{"run_for": "10ms"}, drivers.ExitResult{}, ""},
		{"exit code", map[string]any{"run_for": "10ms", "exit_code": 3}, drivers.ExitResult{ExitCode: 3}, ""},
		{"exit signal", map[string]any{"run_for": "1ms", "exit_code": 137, "exit_signal": 9}, drivers.ExitResult{ExitCode: 137, Signal: 9}, ""},
		{"exit err msg", map[string]any{"run_for": "1ms", "exit_err_msg": "boom"}, drivers.ExitResult{}, "boom"},
		{"nanoseconds", map[string]any{"run_for": 1000000, "exit_code": 1}, drivers.ExitResult{ExitCode: 1}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDriver(t)
				h := start(t, d, taskConfig(t, "t1", tc.conf))
				if h.State != drivers.TaskStateRunning || h.Version != handleVersion || len(h.DriverState) == 0 {
					t.Fatalf("handle = %+v", h)
				}
				res := waitExit(t, d, "t1")
				if res.ExitCode != tc.want.ExitCode || res.Signal != tc.want.Signal {
					t.Fatalf("result = %+v, want %+v", res, tc.want)
				}
				if (res.Err == nil) != (tc.err == "") || (res.Err != nil && res.Err.Error() != tc.err) {
					t.Fatalf("result err = %v, want %q", res.Err, tc.err)
				}
				st, err := d.InspectTask(context.Background(), "t1")
				if err != nil {
					t.Fatal(err)
				}
				if st.State != drivers.TaskStateExited || st.ExitResult == nil || st.CompletedAt.IsZero() {
					t.Fatalf("status = %+v", st)
				}
			})
		})
	}
}

// TestDriver_NoRunForExitsAtOnce: a task without run_for exits as soon as
// it started, after writing stdout_string, with its exit_code, as Nomad's
// mock driver does (Nomad's API tests run such tasks to completion).
func TestDriver_NoRunForExitsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		path := filepath.Join(t.TempDir(), "web.stdout.0")
		cfg := taskConfig(t, "t1", map[string]any{"stdout_string": "0\n1\n2\n", "exit_code": 2})
		cfg.StdoutPath = path
		began := time.Now()
		start(t, d, cfg)
		res := waitExit(t, d, "t1")
		if elapsed := time.Since(began); elapsed != 0 {
			t.Errorf("exited after %v of (fake) time, want at once", elapsed)
		}
		if res.ExitCode != 2 || res.Signal != 0 || res.Err != nil {
			t.Errorf("result = %+v, want exit code 2", res)
		}
		if b, _ := os.ReadFile(path); string(b) != "0\n1\n2\n" {
			t.Errorf("stdout = %q, want the whole stdout_string", b)
		}
	})
}

func TestDriver_StartErrors(t *testing.T) {
	cases := []struct {
		name        string
		conf        map[string]any
		recoverable bool
	}{
		{"unrecoverable", map[string]any{"start_error": "no luck"}, false},
		{"recoverable", map[string]any{"start_error": "try again", "start_error_recoverable": true}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDriver(t)
				_, err := d.StartTask(context.Background(), taskConfig(t, "t1", tc.conf))
				if err == nil || err.Error() != tc.conf["start_error"] {
					t.Fatalf("err = %v", err)
				}
				if drivers.IsRecoverable(err) != tc.recoverable {
					t.Fatalf("IsRecoverable = %v, want %v", drivers.IsRecoverable(err), tc.recoverable)
				}
				if _, err := d.InspectTask(context.Background(), "t1"); !errors.Is(err, drivers.ErrTaskNotFound) {
					t.Fatalf("failed task is known: %v", err)
				}
			})
		})
	}
}

func TestDriver_InvalidConfig(t *testing.T) {
	d := newDriver(t)
	cases := map[string]string{
		"unknown field":     `{"no_such_field": 1}`,
		"bad duration":      `{"run_for": "soon"}`,
		"bad duration type": `{"run_for": true}`,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := &drivers.TaskConfig{ID: "t1", Name: "web", RawConfig: json.RawMessage(raw)}
				if _, err := d.StartTask(context.Background(), cfg); err == nil {
					t.Fatal("StartTask accepted an invalid config")
				}
			})
		})
	}
	if _, err := d.StartTask(context.Background(), &drivers.TaskConfig{}); err == nil {
		t.Fatal("StartTask accepted a config without ID")
	}
}

func TestDriver_StartBlockFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		begin := time.Now()
		start(t, d, taskConfig(t, "t1", map[string]any{"start_block_for": "30ms", "run_for": "1ms"}))
		if el := time.Since(begin); el < 30*time.Millisecond {
			t.Fatalf("StartTask returned after %s, want >= 30ms", el)
		}

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := d.StartTask(ctx, taskConfig(t, "t2", map[string]any{"start_block_for": "1h"}))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestDriver_DuplicateID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		start(t, d, taskConfig(t, "t1", UntilStopped(nil)))
		if _, err := d.StartTask(context.Background(), taskConfig(t, "t1", UntilStopped(nil))); err == nil {
			t.Fatal("started the same task ID twice")
		}
	})
}

func TestDriver_StopTask(t *testing.T) {
	cases := []struct {
		name       string
		conf       map[string]any
		killSignal string
		signal     string
		timeout    time.Duration
		want       drivers.ExitResult
	}{
		{"default SIGINT", runForever, "", "", time.Second, drivers.ExitResult{ExitCode: 130, Signal: 2}},
		{"task kill_signal", runForever, "SIGTERM", "", time.Second, drivers.ExitResult{ExitCode: 143, Signal: 15}},
		{"explicit signal", runForever, "SIGTERM", "HUP", time.Second, drivers.ExitResult{ExitCode: 129, Signal: 1}},
		{"kill_after within timeout", map[string]any{"kill_after": "20ms", "run_for": "1h"}, "", "", 10 * time.Second, drivers.ExitResult{ExitCode: 130, Signal: 2}},
		{"kill_after past timeout", map[string]any{"kill_after": "1h", "run_for": "2h"}, "", "", 20 * time.Millisecond, drivers.ExitResult{ExitCode: 137, Signal: 9}},
		{"run_for elapsed first", map[string]any{"run_for": "1ms", "exit_code": 4}, "", "", time.Second, drivers.ExitResult{ExitCode: 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDriver(t)
				cfg := taskConfig(t, "t1", tc.conf)
				cfg.KillSignal = tc.killSignal
				start(t, d, cfg)
				if tc.conf["run_for"] == "1ms" {
					waitExit(t, d, "t1")
				}
				if err := d.StopTask(context.Background(), "t1", tc.timeout, tc.signal); err != nil {
					t.Fatalf("StopTask: %v", err)
				}
				res := waitExit(t, d, "t1")
				if *res != tc.want {
					t.Fatalf("result = %+v, want %+v", res, tc.want)
				}
				// Idempotent: stopping an exited task is fine.
				if err := d.StopTask(context.Background(), "t1", tc.timeout, tc.signal); err != nil {
					t.Fatalf("second StopTask: %v", err)
				}
			})
		})
	}
}

func TestDriver_StopTaskErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		if err := d.StopTask(context.Background(), "nope", time.Second, ""); !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Fatalf("err = %v", err)
		}
		start(t, d, taskConfig(t, "t1", UntilStopped(map[string]any{"kill_after": "1h"})))
		if err := d.StopTask(context.Background(), "t1", time.Second, "SIGNOPE"); err == nil {
			t.Fatal("bad signal accepted")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := d.StopTask(ctx, "t1", time.Hour, ""); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestDriver_SignalTask(t *testing.T) {
	cases := []struct {
		name    string
		conf    map[string]any
		signal  string
		wantErr string
	}{
		{"recorded", nil, "SIGHUP", ""},
		{"signal_error", map[string]any{"signal_error": "nope"}, "SIGHUP", "nope"},
		{"bad signal", nil, "SIGNOPE", "unknown signal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDriver(t)
				start(t, d, taskConfig(t, "t1", UntilStopped(tc.conf)))
				err := d.SignalTask(context.Background(), "t1", tc.signal)
				if tc.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					if got := d.ReceivedSignals("t1"); len(got) != 1 || got[0] != tc.signal {
						t.Fatalf("ReceivedSignals = %v", got)
					}
					st, _ := d.InspectTask(context.Background(), "t1")
					if st.State != drivers.TaskStateRunning {
						t.Fatalf("signal ended the task: %+v", st)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			})
		})
	}
}

func TestDriver_Stdout(t *testing.T) {
	cases := []struct {
		name string
		conf map[string]any
		want string
	}{
		{"once", map[string]any{"stdout_string": "hi\n"}, "hi\n"},
		{"repeat", map[string]any{"stdout_string": "x", "stdout_repeat": 3, "stdout_repeat_duration": "1ms", "run_for": "1h"}, "xxxx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDriver(t)
				path := filepath.Join(t.TempDir(), "web.stdout.0")
				cfg := taskConfig(t, "t1", tc.conf)
				cfg.StdoutPath = path
				start(t, d, cfg)
				// The bubble's time: past every repeat; then all is written
				// once the driver's goroutines are idle.
				time.Sleep(time.Second)
				synctest.Wait()
				if b, _ := os.ReadFile(path); string(b) != tc.want {
					t.Fatalf("stdout before destroy = %q, want %q", b, tc.want)
				}
				if err := d.DestroyTask(context.Background(), "t1", true); err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(path)
				if string(b) != tc.want {
					t.Fatalf("stdout = %q, want %q", b, tc.want)
				}
			})
		})
	}
}

func TestDriver_WaitTask(t *testing.T) {
	t.Run("ctx cancelled closes without a value", func(t *testing.T) {
		d := newDriver(t)
		start(t, d, taskConfig(t, "t1", runForever))
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := d.WaitTask(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if res, ok := <-ch; ok || res != nil {
			t.Fatalf("got %v, %v", res, ok)
		}
	})
	t.Run("wait_never_returns", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := newDriver(t)
			start(t, d, taskConfig(t, "t1", map[string]any{"wait_never_returns": true, "run_for": "1ms"}))
			ch, err := d.WaitTask(context.Background(), "t1")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond) // the bubble's time: run_for passes
			synctest.Wait()
			if st, _ := d.InspectTask(context.Background(), "t1"); st.State != drivers.TaskStateExited {
				t.Fatalf("state %s after run_for, want exited", st.State)
			}
			// The driver has done all it will: nothing is on its way.
			select {
			case res, ok := <-ch:
				t.Fatalf("wait channel delivered %v, %v", res, ok)
			default:
			}
		})
	})
	t.Run("unknown task", func(t *testing.T) {
		d := newDriver(t)
		if _, err := d.WaitTask(context.Background(), "nope"); !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDriver_RecoverTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		h := start(t, d, taskConfig(t, "t1", UntilStopped(nil)))
		if err := d.RecoverTask(context.Background(), h); err != nil {
			t.Fatalf("RecoverTask of a held task: %v", err)
		}
		other := New(nil)
		if err := other.RecoverTask(context.Background(), h); !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Fatalf("RecoverTask by another driver: %v", err)
		}
		if err := d.RecoverTask(context.Background(), &drivers.TaskHandle{DriverState: []byte("junk")}); err == nil {
			t.Fatal("RecoverTask accepted junk state")
		}
	})
}

func TestDriver_DestroyTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		start(t, d, taskConfig(t, "t1", runForever))
		if err := d.DestroyTask(context.Background(), "t1", false); err == nil {
			t.Fatal("destroyed a running task without force")
		}
		if err := d.DestroyTask(context.Background(), "t1", true); err != nil {
			t.Fatal(err)
		}
		if _, err := d.InspectTask(context.Background(), "t1"); !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Fatalf("destroyed task still known: %v", err)
		}
		start(t, d, taskConfig(t, "t2", map[string]any{"run_for": "1ms"}))
		waitExit(t, d, "t2")
		if err := d.DestroyTask(context.Background(), "t2", false); err != nil {
			t.Fatalf("destroying an exited task: %v", err)
		}
		if err := d.DestroyTask(context.Background(), "t2", false); !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Fatalf("second destroy: %v", err)
		}
	})
}

func TestDriver_TaskStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t)
		start(t, d, taskConfig(t, "t1", runForever))
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := d.TaskStats(ctx, "t1", time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if s := <-ch; s == nil || s.MemoryRSS == 0 || s.Timestamp == 0 {
				t.Fatalf("sample = %+v", s)
			}
		}
		cancel()
		for range ch {
		}
		if _, err := d.TaskStats(context.Background(), "t1", 0); err == nil {
			t.Fatal("zero interval accepted")
		}
	})
}

func TestDriver_ExecTask(t *testing.T) {
	cases := []struct {
		name    string
		conf    map[string]any
		timeout time.Duration
		want    drivers.ExitResult
		stdout  string
		wantErr bool
	}{
		{"no exec_command", nil, time.Second, drivers.ExitResult{}, "", false},
		{"exec_command", map[string]any{"exec_command": map[string]any{"exit_code": 2, "stdout_string": "out"}}, time.Second, drivers.ExitResult{ExitCode: 2}, "out", false},
		{"timeout", map[string]any{"exec_command": map[string]any{"run_for": "1h"}}, 10 * time.Millisecond, drivers.ExitResult{}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDriver(t)
				start(t, d, taskConfig(t, "t1", UntilStopped(tc.conf)))
				res, err := d.ExecTask(context.Background(), "t1", []string{"true"}, tc.timeout)
				if tc.wantErr {
					if err == nil {
						t.Fatal("want error")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if *res.ExitResult != tc.want || string(res.Stdout) != tc.stdout {
					t.Fatalf("result = %+v stdout %q", res.ExitResult, res.Stdout)
				}
			})
		})
	}
}
