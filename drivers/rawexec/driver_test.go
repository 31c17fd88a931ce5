package rawexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/drivers/shared/logrotate"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

func TestMain(m *testing.M) {
	// The driver under test starts shims as "<test binary> shim ...".
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A -race binary sleeps a second at exit by default; every shim's
	// launcher is one that exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}

// newDriver returns a driver whose shims are this test binary.
func newDriver(t *testing.T) *Driver {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, WithShimCommand(exe, []string{shim.Subcommand}))
}

// harness starts tasks and, when the test ends, force-destroys them with
// its current driver (tests that simulate an agent restart replace d) and
// checks that neither the task nor its shim still runs.
type harness struct {
	t *testing.T
	d *Driver
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{t: t, d: newDriver(t)}
}

// config returns a task config running command args in a fresh alloc dir,
// with the paths the client passes.
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
	st := shimState(h.t, th)
	h.t.Cleanup(func() {
		if h.d != nil {
			err := h.d.DestroyTask(context.Background(), cfg.ID, true)
			if err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
				h.t.Errorf("DestroyTask: %v", err)
			}
		}
		testwait.Exit(h.t, "task gone", st.TaskPID, func() bool { return running(st.TaskPID, st.TaskStartTicks) })
		testwait.Exit(h.t, "shim gone", st.ShimPID, func() bool { return running(st.ShimPID, st.ShimStartTicks) })
	})
	return th
}

// shimState decodes the shim's State from a handle.
func shimState(t *testing.T, th *drivers.TaskHandle) *shim.State {
	t.Helper()
	st, err := decodeDriverState(th)
	if err != nil {
		t.Fatalf("driver state: %v", err)
	}
	if st.TaskPID <= 0 || st.ShimPID <= 0 || st.TaskStartTicks == 0 || st.ShimStartTicks == 0 {
		t.Fatalf("incomplete shim state %+v", st)
	}
	return st
}

// running reports whether pid is a live (not zombie) process that started
// at startTicks (field 22 of /proc/<pid>/stat; 0 matches any).
func running(pid int, startTicks uint64) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	ticks, _ := strconv.ParseUint(f[22-3], 10, 64)
	return startTicks == 0 || ticks == startTicks
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

func TestDriver_Basics(t *testing.T) {
	d := newDriver(t)
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
			testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
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
	testwait.FileContains(t, "child pid", cfg.StdoutPath, "child=")
	b, _ := os.ReadFile(cfg.StdoutPath)
	child, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(b), "child=")))
	if err != nil {
		t.Fatalf("parse child pid from %q: %v", b, err)
	}
	if err := h.d.StopTask(context.Background(), "t1", 5*time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	h.wait("t1")
	testwait.Exit(t, "child gone", child, nil)
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

// TestDriver_LogRotation: a task writing fast fills several files; none
// exceeds the limit and nothing is lost or reordered.
func TestDriver_LogRotation(t *testing.T) {
	const lines = 400000 // about 2.7 MB per stream: three files of 1 MiB
	var want strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	cases := []struct {
		name     string
		maxFiles int
		want     []int // file indexes left
	}{
		{"all kept", 10, []int{0, 1, 2}},
		{"oldest deleted", 2, []int{1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			n := strconv.Itoa(lines)
			cfg := h.config("t1", "/bin/sh", "-c", "seq 1 "+n+" & seq 1 "+n+" >&2; wait")
			cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = tc.maxFiles, 1
			h.start(cfg)
			if res := h.wait("t1"); !res.Successful() {
				t.Fatalf("result = %+v", res)
			}
			for _, stream := range []string{"web.stdout", "web.stderr"} {
				files, err := logrotate.Files(cfg.TaskDir.LogDir, stream)
				if err != nil {
					t.Fatal(err)
				}
				var got []int
				var all []byte
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					if len(b) > 1<<20 {
						t.Fatalf("%s: %d bytes, over the 1 MiB limit", filepath.Base(f), len(b))
					}
					i, _ := strconv.Atoi(f[strings.LastIndexByte(f, '.')+1:])
					got = append(got, i)
					all = append(all, b...)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("%s files %v, want %v", stream, got, tc.want)
				}
				full := want.String()
				if tc.maxFiles >= 3 && string(all) != full {
					t.Fatalf("%s: %d bytes, want %d: lines lost or reordered", stream, len(all), len(full))
				}
				// With files deleted, what is left is the end of the output.
				// (A line may straddle two files: the shim copies the pipe
				// in chunks, and the rotator fills a file that ends mid-line.)
				if !strings.HasSuffix(full, string(all)) || len(all) <= len(full)/2 {
					t.Fatalf("%s: the kept files (%d bytes) are not the end of the output", stream, len(all))
				}
			}
		})
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
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
	if err := h.d.SignalTask(context.Background(), "t1", "SIGHUP"); err != nil {
		t.Fatal(err)
	}
	testwait.FileContains(t, "trap output", cfg.StdoutPath, "got-hup")
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

func TestDriver_DestroyTask(t *testing.T) {
	h := newHarness(t)
	th := h.start(h.config("t1", "sleep", "30"))
	st := shimState(t, th)
	if err := h.d.DestroyTask(context.Background(), "t1", false); err == nil {
		t.Fatal("destroyed a running task without force")
	}
	if err := h.d.DestroyTask(context.Background(), "t1", true); err != nil {
		t.Fatal(err)
	}
	if running(st.TaskPID, st.TaskStartTicks) {
		t.Fatal("process survived a forced destroy")
	}
	if _, err := os.Stat(st.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("shim state dir left behind: %v", err)
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
	h.start(h.config("t1", "/bin/sh", "-c", "sleep 30 & exec sleep 30"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := h.d.TaskStats(ctx, "t1", 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for i := 0; i < 2; i++ {
		s := <-ch
		if s == nil || s.Timestamp <= last || s.MemoryRSS == 0 || s.CPUPercent < 0 {
			t.Fatalf("sample %d = %+v", i, s)
		}
		last = s.Timestamp
	}
	// The stream ends when the task exits.
	if err := h.d.StopTask(context.Background(), "t1", time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
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
