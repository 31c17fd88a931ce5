package rawexec

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness starts tasks and force-destroys them when the test ends.
type harness struct {
	t *testing.T
	d *Driver
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, d: New(nil)}
	h.d.pollInterval = 10 * time.Millisecond
	return h
}

// config returns a task config running command args in a fresh task dir.
func (h *harness) config(id, command string, args ...string) *drivers.TaskConfig {
	h.t.Helper()
	alloc := h.t.TempDir()
	raw, err := json.Marshal(TaskConfig{Command: command, Args: args})
	if err != nil {
		h.t.Fatal(err)
	}
	taskDir := filepath.Join(alloc, "web")
	if err := os.MkdirAll(filepath.Join(taskDir, "local"), 0o755); err != nil {
		h.t.Fatal(err)
	}
	return &drivers.TaskConfig{
		ID:       id,
		Name:     "web",
		AllocID:  "a1",
		AllocDir: alloc,
		TaskDir: drivers.TaskDir{
			Dir:      taskDir,
			LocalDir: filepath.Join(taskDir, "local"),
			LogDir:   filepath.Join(alloc, "alloc", "logs"),
		},
		Env:        map[string]string{"NOMAD_TASK_NAME": "web", "NOMAD_ALLOC_ID": "a1"},
		StdoutPath: filepath.Join(alloc, "alloc", "logs", "web.stdout.0"),
		StderrPath: filepath.Join(alloc, "alloc", "logs", "web.stderr.0"),
		RawConfig:  raw,
	}
}

func (h *harness) start(cfg *drivers.TaskConfig) *drivers.TaskHandle {
	h.t.Helper()
	th, err := h.d.StartTask(context.Background(), cfg)
	if err != nil {
		h.t.Fatalf("StartTask: %v", err)
	}
	h.t.Cleanup(func() {
		err := h.d.DestroyTask(context.Background(), cfg.ID, true)
		if err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
			h.t.Errorf("DestroyTask: %v", err)
		}
	})
	return th
}

func (h *harness) wait(id string) *drivers.ExitResult {
	h.t.Helper()
	return waitResult(h.t, h.d, id)
}

func waitResult(t *testing.T, d *Driver, id string) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch, err := d.WaitTask(ctx, id)
	if err != nil {
		t.Fatalf("WaitTask: %v", err)
	}
	res, ok := <-ch
	if !ok || res == nil {
		t.Fatalf("no exit result: %v", ctx.Err())
	}
	return res
}

// eventually polls cond until it is true or 10s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fileContains(path, s string) func() bool {
	return func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), s)
	}
}

func TestDriver_Basics(t *testing.T) {
	d := New(nil)
	if d.Name() != "raw_exec" {
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
	if fp := <-ch; fp.Health != drivers.HealthStateHealthy || fp.Attributes["driver.raw_exec"] != "1" {
		t.Fatalf("fingerprint = %+v", fp)
	}
	cancel()
	for range ch {
	}
}

func TestDriver_Exit(t *testing.T) {
	cases := []struct {
		name   string
		script string
		want   drivers.ExitResult
	}{
		{"exit 0", "exit 0", drivers.ExitResult{}},
		{"exit 3", "exit 3", drivers.ExitResult{ExitCode: 3}},
		{"killed by SIGTERM", "kill -TERM $$; sleep 5", drivers.ExitResult{ExitCode: 143, Signal: 15}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			th := h.start(h.config("t1", "/bin/sh", "-c", tc.script))
			if th.State != drivers.TaskStateRunning || th.Version != handleVersion {
				t.Fatalf("handle = %+v", th)
			}
			if res := h.wait("t1"); *res != tc.want {
				t.Fatalf("result = %+v, want %+v", res, tc.want)
			}
			st, err := h.d.InspectTask(context.Background(), "t1")
			if err != nil {
				t.Fatal(err)
			}
			if st.State != drivers.TaskStateExited || *st.ExitResult != tc.want || st.CompletedAt.IsZero() {
				t.Fatalf("status = %+v", st)
			}
		})
	}
}

func TestDriver_StopTask(t *testing.T) {
	cases := []struct {
		name       string
		script     string
		killSignal string
		signal     string
		timeout    time.Duration
		want       drivers.ExitResult
	}{
		{"SIGINT by default", "echo ready; exec sleep 30", "", "", 10 * time.Second, drivers.ExitResult{ExitCode: 130, Signal: 2}},
		{"task kill_signal", "echo ready; exec sleep 30", "SIGTERM", "", 10 * time.Second, drivers.ExitResult{ExitCode: 143, Signal: 15}},
		{"explicit signal", "echo ready; exec sleep 30", "SIGTERM", "HUP", 10 * time.Second, drivers.ExitResult{ExitCode: 129, Signal: 1}},
		{"ignores SIGINT: killed after timeout", "trap '' INT; echo ready; sleep 30", "", "", 200 * time.Millisecond, drivers.ExitResult{ExitCode: 137, Signal: 9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			cfg := h.config("t1", "/bin/sh", "-c", tc.script)
			cfg.KillSignal = tc.killSignal
			h.start(cfg)
			eventually(t, "ready", fileContains(cfg.StdoutPath, "ready"))
			if err := h.d.StopTask(context.Background(), "t1", tc.timeout, tc.signal); err != nil {
				t.Fatalf("StopTask: %v", err)
			}
			if res := h.wait("t1"); *res != tc.want {
				t.Fatalf("result = %+v, want %+v", res, tc.want)
			}
			// Idempotent once exited.
			if err := h.d.StopTask(context.Background(), "t1", tc.timeout, tc.signal); err != nil {
				t.Fatalf("second StopTask: %v", err)
			}
		})
	}
}

func TestDriver_StopTaskErrors(t *testing.T) {
	h := newHarness(t)
	if err := h.d.StopTask(context.Background(), "nope", time.Second, ""); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("err = %v", err)
	}
	h.start(h.config("t1", "sleep", "30"))
	if err := h.d.StopTask(context.Background(), "t1", time.Second, "SIGNOPE"); err == nil {
		t.Fatal("bad signal accepted")
	}
}

func TestDriver_StopKillsGroup(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "/bin/sh", "-c", "sleep 30 & echo child=$!; wait")
	h.start(cfg)
	eventually(t, "child pid", fileContains(cfg.StdoutPath, "child="))
	b, _ := os.ReadFile(cfg.StdoutPath)
	child, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(b), "child=")))
	if err != nil {
		t.Fatalf("parse child pid from %q: %v", b, err)
	}
	if err := h.d.StopTask(context.Background(), "t1", 5*time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	h.wait("t1")
	eventually(t, "child gone", func() bool {
		st, err := readProcStat(child)
		return err != nil || st.State == 'Z'
	})
}

func TestDriver_Output(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "/bin/sh", "-c", "echo out; echo err >&2")
	h.start(cfg)
	h.wait("t1")
	if err := h.d.DestroyTask(context.Background(), "t1", false); err != nil {
		t.Fatal(err)
	}
	// A second run appends to the same files.
	h.start(cfg)
	h.wait("t1")
	for path, want := range map[string]string{cfg.StdoutPath: "out\nout\n", cfg.StderrPath: "err\nerr\n"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Fatalf("%s = %q, want %q", filepath.Base(path), b, want)
		}
	}
}

func TestDriver_EnvAndInterpolation(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "/bin/sh", "-c", `echo "foo=$FOO"; echo "arg=$1"; echo "pwd=$(pwd)"; echo "path=$PATH"`, "sh", "${NOMAD_ALLOC_ID}-${NOMAD_TASK_NAME}")
	cfg.Env["FOO"] = "bar"
	h.start(cfg)
	if res := h.wait("t1"); !res.Successful() {
		t.Fatalf("result = %+v", res)
	}
	b, _ := os.ReadFile(cfg.StdoutPath)
	out := string(b)
	for _, want := range []string{"foo=bar\n", "arg=a1-web\n", "pwd=" + cfg.TaskDir.Dir + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "path=\n") {
		t.Errorf("task got no PATH: %q", out)
	}
}

func TestDriver_InvalidConfig(t *testing.T) {
	h := newHarness(t)
	cases := map[string]json.RawMessage{
		"missing command":   json.RawMessage(`{"args":["x"]}`),
		"unknown field":     json.RawMessage(`{"command":"sleep","image":"x"}`),
		"command not found": json.RawMessage(`{"command":"no-such-command-drover"}`),
		"relative missing":  json.RawMessage(`{"command":"local/nope.sh"}`),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := h.config("t1", "x")
			cfg.RawConfig = raw
			if _, err := h.d.StartTask(context.Background(), cfg); err == nil {
				t.Fatal("StartTask accepted an invalid config")
			}
			if _, err := h.d.InspectTask(context.Background(), "t1"); !errors.Is(err, drivers.ErrTaskNotFound) {
				t.Fatalf("failed start left the task behind: %v", err)
			}
		})
	}
}

func TestDriver_RelativeCommand(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "local/run.sh")
	script := filepath.Join(cfg.TaskDir.LocalDir, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.start(cfg)
	if res := h.wait("t1"); res.ExitCode != 7 {
		t.Fatalf("result = %+v", res)
	}
}

func TestDriver_DuplicateID(t *testing.T) {
	h := newHarness(t)
	h.start(h.config("t1", "sleep", "30"))
	if _, err := h.d.StartTask(context.Background(), h.config("t1", "sleep", "30")); err == nil {
		t.Fatal("started the same task ID twice")
	}
}

func TestDriver_User(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "/bin/sh", "-c", "id -u")
	cfg.User = "nobody"
	cfg.TaskDir.Dir = "/" // nobody cannot enter the test's private temp dir
	if os.Geteuid() != 0 {
		if _, err := h.d.StartTask(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "root") {
			t.Fatalf("err = %v, want an error saying root is needed", err)
		}
		return
	}
	h.start(cfg)
	if res := h.wait("t1"); !res.Successful() {
		t.Fatalf("result = %+v", res)
	}
	b, _ := os.ReadFile(cfg.StdoutPath)
	if strings.TrimSpace(string(b)) == "0" {
		t.Fatalf("task ran as root")
	}

	cfg2 := h.config("t2", "true")
	cfg2.User = "no-such-user-drover"
	if _, err := h.d.StartTask(context.Background(), cfg2); err == nil {
		t.Fatal("unknown user accepted")
	}
}

func TestDriver_SignalTask(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "/bin/sh", "-c", "trap 'echo got-hup' HUP; echo ready; while true; do sleep 0.05; done")
	h.start(cfg)
	eventually(t, "ready", fileContains(cfg.StdoutPath, "ready"))
	if err := h.d.SignalTask(context.Background(), "t1", "SIGHUP"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "trap output", fileContains(cfg.StdoutPath, "got-hup"))
	if err := h.d.SignalTask(context.Background(), "t1", "SIGNOPE"); err == nil {
		t.Fatal("bad signal accepted")
	}
	if err := h.d.StopTask(context.Background(), "t1", time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	h.wait("t1")
	if err := h.d.SignalTask(context.Background(), "t1", "SIGHUP"); err == nil {
		t.Fatal("signalled an exited task")
	}
}

func TestDriver_RecoverTask(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))

	// The same driver still holds it.
	if err := h.d.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("RecoverTask on the same driver: %v", err)
	}

	// A new driver (as after an agent restart) re-attaches by pid.
	d2 := New(nil)
	d2.pollInterval = 10 * time.Millisecond
	if err := d2.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	st, err := d2.InspectTask(context.Background(), "t1")
	if err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if err := d2.SignalTask(context.Background(), "t1", "SIGCONT"); err != nil {
		t.Fatalf("SignalTask on a re-attached task: %v", err)
	}
	if err := d2.StopTask(context.Background(), "t1", 10*time.Second, ""); err != nil {
		t.Fatalf("StopTask: %v", err)
	}
	if res := waitResult(t, d2, "t1"); res.Err == nil {
		t.Fatalf("re-attached result = %+v, want an unknown exit", res)
	}
	if res := h.wait("t1"); res.Signal != 2 {
		t.Fatalf("original driver result = %+v, want SIGINT", res)
	}
	if err := d2.DestroyTask(context.Background(), "t1", false); err != nil {
		t.Fatal(err)
	}

	// The process is gone now.
	if err := New(nil).RecoverTask(context.Background(), th); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("RecoverTask of an exited task: %v", err)
	}
}

func TestDriver_RecoverTaskMismatch(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	var st driverState
	if err := json.Unmarshal(th.DriverState, &st); err != nil {
		t.Fatal(err)
	}
	st.StartTime++ // the pid now names "another" process
	bad := *th
	bad.DriverState, _ = json.Marshal(st)
	if err := New(nil).RecoverTask(context.Background(), &bad); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("err = %v, want ErrTaskNotFound", err)
	}
	junk := *th
	junk.DriverState = []byte("junk")
	if err := New(nil).RecoverTask(context.Background(), &junk); err == nil {
		t.Fatal("junk driver state accepted")
	}
}

func TestDriver_RecoverKilledTask(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	d2 := New(nil)
	d2.pollInterval = 10 * time.Millisecond
	if err := d2.RecoverTask(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	if err := d2.DestroyTask(context.Background(), "t1", true); err != nil {
		t.Fatal(err)
	}
	if res := h.wait("t1"); res.Signal != 9 || res.ExitCode != 137 {
		t.Fatalf("result = %+v", res)
	}
}

func TestDriver_DestroyTask(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	var st driverState
	if err := json.Unmarshal(th.DriverState, &st); err != nil {
		t.Fatal(err)
	}
	if err := h.d.DestroyTask(context.Background(), "t1", false); err == nil {
		t.Fatal("destroyed a running task without force")
	}
	if err := h.d.DestroyTask(context.Background(), "t1", true); err != nil {
		t.Fatal(err)
	}
	if alive(st.Pid, st.StartTime) {
		t.Fatal("process survived a forced destroy")
	}
	if _, err := h.d.InspectTask(context.Background(), "t1"); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("destroyed task still known: %v", err)
	}
	if err := h.d.DestroyTask(context.Background(), "t1", true); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("second destroy: %v", err)
	}
}

func TestDriver_TaskStats(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	var st driverState
	if err := json.Unmarshal(th.DriverState, &st); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := h.d.TaskStats(ctx, "t1", 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		s := <-ch
		if s == nil || s.Timestamp == 0 || s.MemoryRSS == 0 || s.Pids[strconv.Itoa(st.Pid)] == nil {
			t.Fatalf("sample %d = %+v", i, s)
		}
	}
	cancel()
	for range ch {
	}
	if _, err := h.d.TaskStats(context.Background(), "t1", 0); err == nil {
		t.Fatal("zero interval accepted")
	}
	if _, err := h.d.TaskStats(context.Background(), "nope", time.Second); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("err = %v", err)
	}
}

func TestDriver_ExecTask(t *testing.T) {
	cases := []struct {
		name    string
		cmd     []string
		timeout time.Duration
		stdout  string
		stderr  string
		want    drivers.ExitResult
		wantErr bool
	}{
		{"output and exit", []string{"/bin/sh", "-c", "echo hi; echo oops >&2; exit 2"}, 10 * time.Second, "hi\n", "oops\n", drivers.ExitResult{ExitCode: 2}, false},
		{"task env and dir", []string{"/bin/sh", "-c", `echo "$NOMAD_TASK_NAME $(basename "$(pwd)")"`}, 10 * time.Second, "web web\n", "", drivers.ExitResult{}, false},
		{"timeout", []string{"sleep", "30"}, 50 * time.Millisecond, "", "", drivers.ExitResult{}, true},
		{"empty", nil, time.Second, "", "", drivers.ExitResult{}, true},
		{"not found", []string{"no-such-command-drover"}, time.Second, "", "", drivers.ExitResult{}, true},
	}
	h := newHarness(t)
	h.start(h.config("t1", "sleep", "30"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h.d.ExecTask(context.Background(), "t1", tc.cmd, tc.timeout)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want error, got %+v", res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Stdout) != tc.stdout || string(res.Stderr) != tc.stderr || *res.ExitResult != tc.want {
				t.Fatalf("result = %q %q %+v", res.Stdout, res.Stderr, res.ExitResult)
			}
		})
	}
}

func TestDriver_WaitTaskCancel(t *testing.T) {
	h := newHarness(t)
	h.start(h.config("t1", "sleep", "30"))
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := h.d.WaitTask(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if res, ok := <-ch; ok || res != nil {
		t.Fatalf("got %v, %v", res, ok)
	}
	if _, err := h.d.WaitTask(context.Background(), "nope"); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("err = %v", err)
	}
}
