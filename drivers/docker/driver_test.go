package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"

	"github.com/drover-io/drover/drivers/shared/logrotate"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// allocSeq numbers the alloc IDs of the tests' containers.
var allocSeq atomic.Int64

// harness is a driver against the real daemon whose tasks are destroyed,
// and whose goroutines are stopped, when the test ends.
type harness struct {
	t *testing.T
	d *Driver
}

func newHarness(t *testing.T, cfg *Config) *harness {
	t.Helper()
	requireDocker(t)
	d, err := New(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Shutdown)
	return &harness{t: t, d: d}
}

// config returns a task config running the test image with conf (the
// image is filled in) in a fresh alloc dir.
func (h *harness) config(conf TaskConfig) *drivers.TaskConfig {
	h.t.Helper()
	if conf.Image == "" {
		conf.Image = testImage
	}
	raw, err := json.Marshal(conf)
	if err != nil {
		h.t.Fatal(err)
	}
	alloc := h.t.TempDir()
	allocID := fmt.Sprintf("%s%d", testAllocPrefix, allocSeq.Add(1))
	taskDir := filepath.Join(alloc, "web")
	td := drivers.TaskDir{
		Dir:        taskDir,
		LocalDir:   filepath.Join(taskDir, "local"),
		SecretsDir: filepath.Join(taskDir, "secrets"),
		SharedDir:  filepath.Join(alloc, "alloc"),
		LogDir:     filepath.Join(alloc, "alloc", "logs"),
	}
	for _, dir := range []string{td.LocalDir, td.SecretsDir, td.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			h.t.Fatal(err)
		}
	}
	return &drivers.TaskConfig{
		ID:         allocID + "/web/1",
		Name:       "web",
		JobName:    "example",
		JobID:      "example",
		AllocID:    allocID,
		AllocDir:   alloc,
		TaskDir:    td,
		Env:        map[string]string{"NOMAD_TASK_NAME": "web", "NOMAD_ALLOC_ID": allocID},
		Resources:  &drivers.Resources{CPUShares: 100, MemoryMB: 64},
		StdoutPath: filepath.Join(td.LogDir, "web.stdout.0"),
		StderrPath: filepath.Join(td.LogDir, "web.stderr.0"),
		RawConfig:  raw,
	}
}

// shell is a config running script under sh -c.
func shell(script string) TaskConfig {
	return TaskConfig{Command: "sh", Args: []string{"-c", script}}
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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

// inspect returns the task's container as the daemon sees it.
func (h *harness) inspect(cfg *drivers.TaskConfig) *container.InspectResponse {
	h.t.Helper()
	st, err := h.d.InspectTask(context.Background(), cfg.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := h.d.client.inspectContainer(context.Background(), st.DriverAttributes["container_id"])
	if err != nil {
		h.t.Fatal(err)
	}
	return info
}

// eventually polls cond until it is true or testwait.Bound passes. It is
// for a real process that gives no event to wait on (a server in a
// container starting to listen); the bound is for a hung test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an event
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDriver_Basics(t *testing.T) {
	d, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown()
	if d.Name() != "docker" {
		t.Fatalf("Name = %q", d.Name())
	}
	if c := d.Capabilities(); !c.SendSignals || !c.Exec || c.FSIsolation != "image" {
		t.Fatalf("Capabilities = %+v", c)
	}
	for _, id := range []string{"nope"} {
		if _, err := d.InspectTask(context.Background(), id); !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Fatalf("InspectTask(unknown) = %v", err)
		}
		if err := d.StopTask(context.Background(), id, time.Second, ""); !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Fatalf("StopTask(unknown) = %v", err)
		}
	}
}

func TestDriver_FingerprintUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	d, err := New(nil, &Config{Endpoint: "unix://" + sock})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	if fp.Health != drivers.HealthStateUndetected || !strings.Contains(fp.HealthDescription, "Docker daemon unreachable at unix://"+sock) {
		t.Fatalf("fingerprint = %+v", fp)
	}
	if fp.Attributes["driver.docker"] != "" {
		t.Fatalf("undetected driver has attributes %v", fp.Attributes)
	}
	cancel()
	for range ch {
	}
}

func TestDriver_FingerprintHealthy(t *testing.T) {
	h := newHarness(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := h.d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	if fp.Health != drivers.HealthStateHealthy {
		t.Fatalf("fingerprint = %+v", fp)
	}
	a := fp.Attributes
	if a["driver.docker"] != "1" || a["driver.docker.version"] == "" || a["driver.docker.os_type"] != "linux" || a["driver.docker.volumes.enabled"] != "false" || a["driver.docker.privileged.enabled"] != "false" {
		t.Fatalf("attributes = %v", a)
	}
	cancel()
	for range ch {
	}
}

func TestDriver_Exit(t *testing.T) {
	cases := []struct {
		name      string
		script    string
		want      drivers.ExitResult
		out, errs string
		memoryMB  int64
	}{
		{"exit 0 with output", "echo hello; echo oops >&2", drivers.ExitResult{}, "hello\n", "oops\n", 0},
		{"exit 3", "exit 3", drivers.ExitResult{ExitCode: 3}, "", "", 0},
		// tail buffers a "line" of /dev/zero until the limit kills it.
		{"OOM killed", "tail /dev/zero", drivers.ExitResult{ExitCode: 137, OOMKilled: true}, "", "", 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			cfg := h.config(shell(tc.script))
			if tc.memoryMB > 0 {
				cfg.Resources.MemoryMB = tc.memoryMB
			}
			th := h.start(cfg)
			if th.State != drivers.TaskStateRunning || th.Version != handleVersion {
				t.Fatalf("handle = %+v", th)
			}
			var ds driverState
			if err := json.Unmarshal(th.DriverState, &ds); err != nil || ds.ContainerID == "" || ds.Image != testImage {
				t.Fatalf("driver state %s: %v", th.DriverState, err)
			}
			if res := h.wait(cfg.ID); *res != tc.want {
				t.Fatalf("result = %+v, want %+v", res, tc.want)
			}
			// The exit is reported once the output is copied.
			if got := readFile(t, cfg.StdoutPath); got != tc.out {
				t.Fatalf("stdout = %q, want %q", got, tc.out)
			}
			if got := readFile(t, cfg.StderrPath); got != tc.errs {
				t.Fatalf("stderr = %q, want %q", got, tc.errs)
			}
			st, err := h.d.InspectTask(context.Background(), cfg.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.State != drivers.TaskStateExited || *st.ExitResult != tc.want || st.CompletedAt.IsZero() || st.StartedAt.IsZero() {
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
		// PID 1 ignores signals it has no handler for, hence the traps.
		{"SIGINT trapped", "trap 'echo got INT; exit 130' INT; echo ready; while :; do sleep 0.1; done", "SIGINT", "", 30 * time.Second, drivers.ExitResult{ExitCode: 130, Signal: 2}},
		{"SIGTERM by default", "trap 'exit 143' TERM; echo ready; while :; do sleep 0.1; done", "", "", 30 * time.Second, drivers.ExitResult{ExitCode: 143, Signal: 15}},
		{"ignores the signal: killed after timeout", "trap '' TERM; echo ready; while :; do sleep 0.1; done", "", "SIGTERM", 500 * time.Millisecond, drivers.ExitResult{ExitCode: 137, Signal: 9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			cfg := h.config(shell(tc.script))
			cfg.KillSignal = tc.killSignal
			h.start(cfg)
			testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
			if err := h.d.StopTask(context.Background(), cfg.ID, tc.timeout, tc.signal); err != nil {
				t.Fatalf("StopTask: %v", err)
			}
			if res := h.wait(cfg.ID); *res != tc.want {
				t.Fatalf("result = %+v, want %+v", res, tc.want)
			}
			if err := h.d.StopTask(context.Background(), cfg.ID, tc.timeout, tc.signal); err != nil {
				t.Fatalf("second StopTask: %v", err)
			}
		})
	}
}

func TestDriver_ResourcesEnvMountsLabels(t *testing.T) {
	h := newHarness(t, nil)
	conf := shell(`echo "foo=$FOO alloc_dir=$NOMAD_ALLOC_DIR arg=$0"; cat /local/in.txt; echo written > /alloc/out.txt; echo ready; while :; do sleep 0.1; done`)
	conf.Args = append(conf.Args, "${NOMAD_ALLOC_ID}")
	conf.Labels = StringMap{"team": "infra"}
	conf.Mounts = []MountConfig{{Type: "tmpfs", Target: "/scratch"}}
	cfg := h.config(conf)
	cfg.Env["FOO"] = "bar"
	cfg.Resources = &drivers.Resources{CPUShares: 300, MemoryMB: 64, MemoryMaxMB: 96}
	if err := os.WriteFile(filepath.Join(cfg.TaskDir.LocalDir, "in.txt"), []byte("from local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.start(cfg)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
	out := readFile(t, cfg.StdoutPath)
	for _, want := range []string{"foo=bar alloc_dir=/alloc arg=" + cfg.AllocID + "\n", "from local\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	if got := readFile(t, filepath.Join(cfg.TaskDir.SharedDir, "out.txt")); got != "written\n" {
		t.Errorf("/alloc/out.txt = %q", got)
	}
	info := h.inspect(cfg)
	if info.HostConfig.Memory != 96<<20 || info.HostConfig.MemoryReservation != 64<<20 || info.HostConfig.CPUShares != 300 {
		t.Errorf("HostConfig = %+v", info.HostConfig)
	}
	if info.HostConfig.NetworkMode != "default" {
		t.Errorf("NetworkMode = %q", info.HostConfig.NetworkMode)
	}
	if info.Name != "/web-"+cfg.AllocID {
		t.Errorf("container name = %q", info.Name)
	}
	for k, v := range map[string]string{LabelAllocID: cfg.AllocID, labelNomadAllocID: cfg.AllocID, labelNomadTaskName: "web", labelNomadJobName: "example", "team": "infra"} {
		if info.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, info.Config.Labels[k], v)
		}
	}
	res, err := h.d.ExecTask(context.Background(), cfg.ID, []string{"sh", "-c", "grep -c ' /scratch tmpfs' /proc/mounts"}, 30*time.Second)
	if err != nil || string(res.Stdout) != "1\n" {
		t.Errorf("tmpfs at /scratch: %+v, %v", res, err)
	}
}

func TestDriver_HostNetwork(t *testing.T) {
	h := newHarness(t, nil)
	conf := shell("echo ok")
	conf.NetworkMode = "host"
	cfg := h.config(conf)
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() {
		t.Fatalf("result = %+v", res)
	}
	if info := h.inspect(cfg); info.HostConfig.NetworkMode != "host" {
		t.Fatalf("NetworkMode = %q", info.HostConfig.NetworkMode)
	}
}

func TestDriver_SignalAndExec(t *testing.T) {
	h := newHarness(t, nil)
	cfg := h.config(shell("trap 'echo got USR1' USR1; echo ready; while :; do sleep 0.1; done"))
	h.start(cfg)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
	if err := h.d.SignalTask(context.Background(), cfg.ID, "SIGUSR1"); err != nil {
		t.Fatalf("SignalTask: %v", err)
	}
	testwait.FileContains(t, "trap output", cfg.StdoutPath, "got USR1")
	if err := h.d.SignalTask(context.Background(), cfg.ID, "SIGNOPE"); err == nil {
		t.Fatal("bad signal accepted")
	}

	cases := []struct {
		cmd            []string
		stdout, stderr string
		code           int
	}{
		{[]string{"echo", "hi"}, "hi\n", "", 0},
		{[]string{"sh", "-c", "echo out; echo err >&2; exit 4"}, "out\n", "err\n", 4},
	}
	for _, tc := range cases {
		res, err := h.d.ExecTask(context.Background(), cfg.ID, tc.cmd, 30*time.Second)
		if err != nil {
			t.Fatalf("ExecTask %q: %v", tc.cmd, err)
		}
		if string(res.Stdout) != tc.stdout || string(res.Stderr) != tc.stderr || res.ExitResult.ExitCode != tc.code {
			t.Errorf("ExecTask %q = stdout %q stderr %q exit %d", tc.cmd, res.Stdout, res.Stderr, res.ExitResult.ExitCode)
		}
	}
	// Docker reports a missing binary as exit 126 or 127, or as an error.
	if res, err := h.d.ExecTask(context.Background(), cfg.ID, []string{"/no/such/binary"}, 30*time.Second); err == nil && res.ExitResult.ExitCode == 0 {
		t.Error("exec of a missing binary succeeded")
	}
}

func TestDriver_TaskStats(t *testing.T) {
	h := newHarness(t, nil)
	cfg := h.config(shell("echo ready; while :; do sleep 0.1; done"))
	h.start(cfg)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := h.d.TaskStats(ctx, cfg.ID, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	u, ok := <-ch
	if !ok {
		t.Fatal("stats channel closed without a sample")
	}
	if u.MemoryRSS == 0 || u.Timestamp == 0 {
		t.Fatalf("usage = %+v", u)
	}
	cancel()
	for range ch {
	}
}

func TestDriver_RecoverTask(t *testing.T) {
	h := newHarness(t, nil)
	// The task prints "before", then "after" once the test creates
	// /alloc/go: that happens while no driver copies its output.
	cfg := h.config(shell("echo before; while [ ! -f /alloc/go ]; do sleep 0.1; done; echo after; trap 'exit 0' TERM; while :; do sleep 0.1; done"))
	th, err := h.d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	testwait.FileContains(t, "before", cfg.StdoutPath, "before")
	h.d.Shutdown() // the agent stops; the container keeps running

	if err := os.WriteFile(filepath.Join(cfg.TaskDir.SharedDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Wait until the container printed "after", as seen by the daemon.
	// The daemon's log stream, followed, says it when it happens.
	logCtx, cancelLogs := context.WithTimeout(context.Background(), testwait.Bound)
	body, err := h.d.client.containerLogs(logCtx, containerIDOf(t, th), time.Time{}, true, false)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{wrote: make(chan struct{}, 1)}
	demuxed := make(chan struct{})
	go func() {
		defer close(demuxed)
		_ = demux(logs, io.Discard, body)
	}()
	logs.await(t, "after")
	cancelLogs()
	body.Close()
	<-demuxed

	d2 := newHarness(t, nil) // the restarted agent's driver
	if err := d2.d.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	if err := d2.d.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("second RecoverTask: %v", err)
	}
	t.Cleanup(func() { _ = d2.d.DestroyTask(context.Background(), cfg.ID, true) })
	testwait.FileContains(t, "after", cfg.StdoutPath, "after")
	if err := d2.d.StopTask(context.Background(), cfg.ID, 30*time.Second, ""); err != nil {
		t.Fatalf("StopTask: %v", err)
	}
	if res := waitResult(t, d2.d, cfg.ID); *res != (drivers.ExitResult{}) {
		t.Fatalf("result = %+v", res)
	}
	if got := readFile(t, cfg.StdoutPath); got != "before\nafter\n" {
		t.Fatalf("stdout after recovery = %q, want each line once", got)
	}
	if err := d2.d.DestroyTask(context.Background(), cfg.ID, false); err != nil {
		t.Fatalf("DestroyTask: %v", err)
	}

	// The container is gone now: recovering it again says so.
	d3 := newHarness(t, nil)
	if err := d3.d.RecoverTask(context.Background(), th); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("RecoverTask of a removed container = %v, want ErrTaskNotFound", err)
	}
}

func containerIDOf(t *testing.T, th *drivers.TaskHandle) string {
	t.Helper()
	var ds driverState
	if err := json.Unmarshal(th.DriverState, &ds); err != nil {
		t.Fatal(err)
	}
	return ds.ContainerID
}

func TestDriver_DestroyTask(t *testing.T) {
	h := newHarness(t, nil)
	cfg := h.config(shell("echo ready; while :; do sleep 0.1; done"))
	th := h.start(cfg)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
	if err := h.d.DestroyTask(context.Background(), cfg.ID, false); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Fatalf("DestroyTask of a running task without force = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	waitCh, err := h.d.WaitTask(ctx, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.d.DestroyTask(context.Background(), cfg.ID, true); err != nil {
		t.Fatalf("DestroyTask: %v", err)
	}
	if res := <-waitCh; res == nil || *res != (drivers.ExitResult{ExitCode: 137, Signal: 9}) {
		t.Fatalf("waiter got %+v, want a SIGKILL exit", res)
	}
	if _, err := h.d.client.inspectContainer(context.Background(), containerIDOf(t, th)); !isNotFound(err) {
		t.Fatalf("container still there: %v", err)
	}
	if _, err := h.d.InspectTask(context.Background(), cfg.ID); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("task still known: %v", err)
	}
}

func TestDriver_StartErrors(t *testing.T) {
	h := newHarness(t, &Config{PullTimeout: Duration(30 * time.Second)})
	cases := []struct {
		name string
		conf TaskConfig
		want string
	}{
		// A registry on a closed local port: the pull fails at once.
		{"missing image", TaskConfig{Image: "127.0.0.1:1/drover/missing:1"}, `image "127.0.0.1:1/drover/missing:1" not found locally and could not be pulled`},
		{"privileged", TaskConfig{Privileged: true}, "allow_privileged"},
		{"missing command", TaskConfig{Command: "/no/such/cmd"}, "start container"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := h.config(tc.conf)
			_, err := h.d.StartTask(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("StartTask err = %v, want it to contain %q", err, tc.want)
			}
			if _, err := h.d.InspectTask(context.Background(), cfg.ID); !errors.Is(err, drivers.ErrTaskNotFound) {
				t.Fatalf("failed start left the task behind: %v", err)
			}
		})
	}
}

func TestDriver_LeftoverContainerReplaced(t *testing.T) {
	h := newHarness(t, nil)
	cfg := h.config(shell("echo first; while :; do sleep 0.1; done"))
	if _, err := h.d.StartTask(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	// An agent that died before persisting the handle: a new driver
	// starts the same task again.
	h.d.Shutdown()
	h2 := newHarness(t, nil)
	th := h2.start(cfg)
	if err := h2.d.StopTask(context.Background(), cfg.ID, 500*time.Millisecond, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	h2.wait(cfg.ID)
	ids, err := testContainers(context.Background(), h2.d.client)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if info, err := h2.d.client.inspectContainer(context.Background(), id); err == nil && info.Config.Labels[LabelAllocID] == cfg.AllocID && id != containerIDOf(t, th) {
			t.Fatalf("leftover container %s not replaced", shortID(id))
		}
	}
}

func TestDriver_LogRotation(t *testing.T) {
	h := newHarness(t, nil)
	// About 2.5 MB of 100-byte lines into 1 MB files, at most 2 kept.
	// Docker keeps its own copy of the output (json-file, by default
	// 2 files of 2 MB, as Nomad's driver sets) that the driver follows;
	// 2.5 MB of lines is 4 MB of JSON there, and Docker drops a rotated
	// file a lagging follower had not read yet. Give Docker room, so that
	// what is tested is the driver's own rotation.
	conf := shell("yes 123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 | head -n 25000")
	conf.Logging = LoggingConfig{Type: "json-file", Config: StringMap{"max-size": "50m"}}
	cfg := h.config(conf)
	cfg.LogMaxFiles = 2
	cfg.LogMaxFileSizeMB = 1
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() {
		t.Fatalf("result = %+v", res)
	}
	// The exit waits for the log copy only up to logDrainTimeout (5s);
	// 4 MB of Docker's JSON under -race on a loaded machine can take
	// longer. The drain bound is not under test here: wait for the copy.
	tk, err := h.d.task(cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-tk.logsDone:
	case <-time.After(2 * time.Minute):
		t.Fatal("the log copy did not end within two minutes of the container's exit")
	}
	files, err := logrotate.Files(filepath.Dir(cfg.StdoutPath), "web.stdout")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(filepath.Dir(cfg.StdoutPath), "web.stdout.1"), filepath.Join(filepath.Dir(cfg.StdoutPath), "web.stdout.2")}
	if !slices.Equal(files, want) {
		for _, f := range files {
			t.Logf("%s: %d bytes", f, len(readFile(t, f)))
		}
		t.Fatalf("log files = %q, want %q", files, want)
	}
	var total int
	for _, f := range files {
		b := readFile(t, f)
		if len(b) > 1<<20 || len(b)%100 != 0 {
			t.Errorf("%s has %d bytes: over the limit or a split line", f, len(b))
		}
		total += len(b)
	}
	if total != 2500000-(1<<20)/100*100 {
		t.Errorf("kept %d bytes of output", total)
	}
}
