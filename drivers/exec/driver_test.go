package exec

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

func TestTaskIsIsolated(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name   string
		script string
		want   string
	}{
		{"echo $$ is 1", `echo $$`, "1"},
		{"proc self stat is pid 1", `read pid rest < /proc/self/stat; echo $pid`, "1"},
		// The shell expands the glob itself: no host process is visible.
		{"only the task's processes", `cat /proc/1/comm; set -- /proc/[0-9]*; echo $# $1`, "sh\n1 /proc/1"},
		{"runs as nobody", `id -u; id -g`, "65534\n65534"},
		{"host /root not visible", `test -e /root/. && echo visible || echo hidden`, "hidden"},
		{"task dirs", `echo $NOMAD_TASK_DIR $NOMAD_ALLOC_DIR $DATA; touch /local/f /alloc/f /tmp/f /secrets/f && echo writable`, "/local /alloc /alloc/data\nwritable"},
		{"chroot env read-only", `touch /etc/x 2>/dev/null && echo writable || echo read-only`, "read-only"},
		{"devices", `head -c 3 /dev/urandom | wc -c; cat /dev/null`, "3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, d: h.d}
			cfg := h.sh(tc.script)
			h.start(cfg)
			res := h.wait(cfg.ID)
			if !res.Successful() {
				t.Fatalf("exit %+v; stderr %q", res, stderr(t, cfg))
			}
			if got := strings.TrimSpace(stdout(t, cfg)); got != tc.want {
				t.Fatalf("stdout %q, want %q (stderr %q)", got, tc.want, stderr(t, cfg))
			}
		})
	}
}

func TestOOMKilled(t *testing.T) {
	h := newHarness(t)
	// tail keeps the last 10 lines of a file without newlines: all of it.
	cfg := h.config("tail", "/dev/zero")
	cfg.Resources = &drivers.Resources{MemoryMB: 16}
	h.start(cfg)
	res := h.wait(cfg.ID)
	if !res.OOMKilled || res.Signal != int(syscall.SIGKILL) || res.ExitCode != 137 {
		t.Fatalf("exit %+v, want OOMKilled by SIGKILL (137)", res)
	}
}

func TestExitCodes(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		script string
		want   drivers.ExitResult
	}{
		{"exit 0", drivers.ExitResult{}},
		{"exit 3", drivers.ExitResult{ExitCode: 3}},
		// A child killed by a signal: the shell reports 128+n.
		{"sh -c 'kill -TERM $$'; exit $?", drivers.ExitResult{ExitCode: 143}},
	}
	for _, tc := range cases {
		t.Run(tc.script, func(t *testing.T) {
			h := &harness{t: t, d: h.d}
			cfg := h.sh(tc.script)
			h.start(cfg)
			if res := h.wait(cfg.ID); *res != tc.want {
				t.Fatalf("exit %+v, want %+v", res, tc.want)
			}
		})
	}
}

func TestStopTask(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name    string
		script  string
		signal  string
		timeout time.Duration
		want    drivers.ExitResult
		// minElapsed: the stop had to wait for the timeout.
		minElapsed time.Duration
	}{
		{
			// SIGINT reaches every process of the task; PID 1 handles it.
			name:    "handled SIGINT exits 130",
			script:  `trap 'exit 130' INT; echo ready; sleep 1000 & wait`,
			signal:  "SIGINT",
			timeout: 10 * time.Second,
			want:    drivers.ExitResult{ExitCode: 130},
		},
		{
			// PID 1 without a handler: the kernel drops SIGINT, so the
			// task is SIGKILLed after the timeout.
			name: "ignored SIGINT is killed after the timeout",
			// "ready" only once PID 1 is sleep: the shell before its exec
			// may handle SIGINT itself.
			script:     `(until read c </proc/1/comm && [ "$c" = sleep ]; do :; done; echo ready) & exec sleep 1000`,
			signal:     "SIGINT",
			timeout:    300 * time.Millisecond,
			want:       drivers.ExitResult{ExitCode: 137, Signal: 9},
			minElapsed: 300 * time.Millisecond,
		},
		{
			name:    "kill_signal used when none given",
			script:  `trap 'exit 42' USR1; echo ready; sleep 1000 & wait`,
			timeout: 10 * time.Second,
			want:    drivers.ExitResult{ExitCode: 42},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, d: h.d}
			cfg := h.sh(tc.script)
			cfg.KillSignal = "SIGUSR1"
			h.start(cfg)
			testwait.FileContains(t, "task ready", cfg.StdoutPath, "ready")
			start := time.Now()
			if err := h.d.StopTask(context.Background(), cfg.ID, tc.timeout, tc.signal); err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			if res := h.wait(cfg.ID); *res != tc.want {
				t.Fatalf("exit %+v, want %+v", res, tc.want)
			}
			if elapsed < tc.minElapsed {
				t.Fatalf("stopped after %v, before the %v timeout", elapsed, tc.minElapsed)
			}
			// Stopping an exited task is a no-op.
			if err := h.d.StopTask(context.Background(), cfg.ID, time.Second, ""); err != nil {
				t.Fatalf("second StopTask: %v", err)
			}
		})
	}
}

func TestSignalTask(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.05; done`)
	h.start(cfg)
	testwait.FileContains(t, "task ready", cfg.StdoutPath, "ready")
	if err := h.d.SignalTask(context.Background(), cfg.ID, "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	testwait.FileContains(t, "trap ran", cfg.StdoutPath, "got-usr1")
	if err := h.d.SignalTask(context.Background(), cfg.ID, "SIGNOPE"); err == nil {
		t.Fatal("unknown signal accepted")
	}
	if err := h.d.StopTask(context.Background(), cfg.ID, 0, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	if err := h.d.SignalTask(context.Background(), cfg.ID, "SIGUSR1"); err == nil {
		t.Fatal("signalling an exited task succeeded")
	}
}

func TestStatsAndDestroy(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`echo ready; exec sleep 1000`)
	th := h.start(cfg)
	st := handleState(t, th)
	testwait.FileContains(t, "task ready", cfg.StdoutPath, "ready")

	ctx, cancel := context.WithCancel(context.Background())
	ch, err := h.d.TaskStats(ctx, cfg.ID, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		u, ok := <-ch
		if !ok {
			t.Fatal("stats channel closed")
		}
		if u.MemoryRSS == 0 || u.Timestamp == 0 {
			t.Fatalf("sample %d: %+v, want memory > 0", i, u)
		}
	}
	cancel()
	for range ch {
	}

	status, err := h.d.InspectTask(context.Background(), cfg.ID)
	if err != nil || status.State != drivers.TaskStateRunning {
		t.Fatalf("InspectTask = %+v, %v", status, err)
	}
	if err := h.d.DestroyTask(context.Background(), cfg.ID, false); err == nil {
		t.Fatal("DestroyTask without force destroyed a running task")
	}
	if err := h.d.DestroyTask(context.Background(), cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	if isolation.Alive(st.Isolation.Pid, st.Isolation.StartTime) {
		t.Fatal("task still runs after DestroyTask")
	}
	cg := st.Isolation.Cgroup
	for _, dir := range append([]string{cg.Path}, mapValues(cg.Paths)...) {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s still there after DestroyTask: %v", dir, err)
		}
	}
	if _, err := h.d.InspectTask(context.Background(), cfg.ID); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("InspectTask after destroy: %v, want ErrTaskNotFound", err)
	}
}

func TestStatsCPU(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`while :; do :; done`)
	h.start(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		_ = h.d.StopTask(context.Background(), cfg.ID, 0, "SIGKILL")
	}()
	ch, err := h.d.TaskStats(ctx, cfg.ID, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first := <-ch
	second := <-ch
	if first == nil || second == nil || second.CPUPercent <= 0 || second.CPUPercent > 250 {
		t.Fatalf("samples %+v then %+v, want a busy CPU in the second", first, second)
	}
	cancel()
	for range ch {
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestRecoverTask(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`echo ready; exec sleep 1000`)
	th := h.start(cfg)
	testwait.FileContains(t, "task ready", cfg.StdoutPath, "ready")

	// A new driver (a restarted agent) re-attaches by pid, start time and
	// cgroup; the old one still reaps its child.
	d2 := newDriver(t)
	if err := d2.RecoverTask(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	if err := d2.RecoverTask(context.Background(), th); err != nil {
		t.Fatalf("second RecoverTask: %v", err)
	}
	if err := d2.StopTask(context.Background(), cfg.ID, 100*time.Millisecond, "SIGINT"); err != nil {
		t.Fatal(err)
	}
	h2 := &harness{t: t, d: d2}
	if res := h2.wait(cfg.ID); res.Signal != int(syscall.SIGKILL) {
		t.Fatalf("recovered task exit %+v, want killed", res)
	}
	if err := d2.DestroyTask(context.Background(), cfg.ID, false); err != nil {
		t.Fatal(err)
	}

	// The task is gone now: recovering it again fails with not found.
	d3 := newDriver(t)
	if err := d3.RecoverTask(context.Background(), th); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("RecoverTask of a gone task: %v, want ErrTaskNotFound", err)
	}
}

func TestStartErrors(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name        string
		mutate      func(*drivers.TaskConfig)
		opts        []Option
		wantErr     string
		recoverable bool
	}{
		{
			name:    "missing command",
			mutate:  func(c *drivers.TaskConfig) { c.RawConfig = []byte(`{"args":["x"]}`) },
			wantErr: `missing "command"`,
		},
		{
			name:    "unknown field",
			mutate:  func(c *drivers.TaskConfig) { c.RawConfig = []byte(`{"command":"/bin/true","image":"x"}`) },
			wantErr: "invalid driver config",
		},
		{
			name:    "command not in root",
			mutate:  func(c *drivers.TaskConfig) { c.RawConfig = []byte(`{"command":"no-such-command"}`) },
			wantErr: `command "no-such-command" not found`,
		},
		{
			name:    "user not allowed",
			mutate:  func(c *drivers.TaskConfig) { c.User = "daemon" },
			wantErr: "does not allow it",
		},
		{
			name:    "unknown user",
			mutate:  func(c *drivers.TaskConfig) { c.User = "no-such-user-x" },
			opts:    []Option{WithOptions(Options{AllowUser: true, CgroupParent: testCgroupParent})},
			wantErr: "no-such-user-x",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := h.d
			if tc.opts != nil {
				d = newDriver(t, tc.opts...)
			}
			h := &harness{t: t, d: d}
			cfg := h.sh("true")
			tc.mutate(cfg)
			_, err := d.StartTask(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("StartTask err = %v, want one containing %q", err, tc.wantErr)
			}
			if drivers.IsRecoverable(err) != tc.recoverable {
				t.Fatalf("recoverable = %v, want %v", drivers.IsRecoverable(err), tc.recoverable)
			}
			if _, err := d.InspectTask(context.Background(), cfg.ID); !errors.Is(err, drivers.ErrTaskNotFound) {
				t.Fatalf("failed task is still known: %v", err)
			}
		})
	}
}

func TestAllowedUser(t *testing.T) {
	h := newHarness(t, WithOptions(Options{AllowUser: true, CgroupParent: testCgroupParent}))
	uid, _, _, err := isolation.LookupUser("daemon")
	if err != nil {
		t.Skipf("no daemon user: %v", err)
	}
	cfg := h.sh("id -u")
	cfg.User = "daemon"
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v: %s", res, stderr(t, cfg))
	}
	if got := strings.TrimSpace(stdout(t, cfg)); got != strconv.Itoa(int(uid)) {
		t.Fatalf("id -u = %q, want %d", got, uid)
	}
}

func TestFingerprint(t *testing.T) {
	needIsolation(t)
	cases := []struct {
		name       string
		d          *Driver
		wantHealth string
		wantDesc   string
	}{
		{"healthy", newDriver(t), drivers.HealthStateHealthy, "healthy"},
		{"broken init stage", New(nil, WithOptions(Options{CgroupParent: testCgroupParent}), WithInitCommand("/nonexistent/drover", nil)),
			drivers.HealthStateUnhealthy, "namespaces do not work"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			ch, err := tc.d.Fingerprint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fp := <-ch
			cancel()
			for range ch {
			}
			if fp.Health != tc.wantHealth || !strings.Contains(fp.HealthDescription, tc.wantDesc) {
				t.Fatalf("fingerprint %+v, want %s containing %q", fp, tc.wantHealth, tc.wantDesc)
			}
			if tc.wantHealth == drivers.HealthStateHealthy {
				layout, _ := isolation.DetectCgroups()
				if fp.Attributes["driver.exec"] != "1" || fp.Attributes["driver.exec.cgroup_version"] != strconv.Itoa(layout.Version) {
					t.Fatalf("attributes %v", fp.Attributes)
				}
			}
		})
	}
}

func TestExecTask(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`echo ready > /local/ready; exec sleep 1000`)
	h.start(cfg)
	testwait.Exists(t, "task ready", cfg.TaskDir.LocalDir+"/ready")
	cases := []struct {
		name     string
		cmd      []string
		timeout  time.Duration
		wantOut  string
		wantExit drivers.ExitResult
		wantErr  string
	}{
		{
			name:    "inside the task",
			cmd:     []string{"sh", "-c", `cat /local/ready; id -u; cat /proc/1/comm; echo $NOMAD_TASK_DIR; echo oops >&2; exit 3`},
			wantOut: "ready\n65534\nsleep\n/local\n", wantExit: drivers.ExitResult{ExitCode: 3},
		},
		{name: "timeout kills it", cmd: []string{"sleep", "1000"}, timeout: 200 * time.Millisecond, wantErr: "deadline exceeded"},
		{name: "missing command", cmd: []string{"no-such-command"}, wantErr: "not found"},
		{name: "empty command", cmd: nil, wantErr: "empty command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h.d.ExecTask(context.Background(), cfg.ID, tc.cmd, tc.timeout)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ExecTask err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Stdout) != tc.wantOut || *res.ExitResult != tc.wantExit || string(res.Stderr) != "oops\n" {
				t.Fatalf("ExecTask = stdout %q stderr %q exit %+v; want %q, %+v", res.Stdout, res.Stderr, res.ExitResult, tc.wantOut, tc.wantExit)
			}
		})
	}
	if _, err := h.d.ExecTask(context.Background(), "nope", []string{"true"}, 0); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("ExecTask of an unknown task: %v", err)
	}
}

func TestFingerprintUnhealthyHost(t *testing.T) {
	cases := []struct {
		name       string
		fake       func(*Driver)
		wantHealth string
		wantDesc   string
	}{
		{
			name:       "not root",
			fake:       func(d *Driver) { d.geteuid = func() int { return 1000 } },
			wantHealth: drivers.HealthStateUndetected,
			wantDesc:   "the exec driver needs the agent to run as root (it runs as uid 1000)",
		},
		{
			name: "no cgroups",
			fake: func(d *Driver) {
				d.geteuid = func() int { return 0 }
				d.layout = func() (*isolation.CgroupLayout, error) {
					return nil, errors.New("no usable cgroups: v1 lacks the memory controller(s)")
				}
			},
			wantHealth: drivers.HealthStateUnhealthy,
			wantDesc:   "exec driver: no usable cgroups: v1 lacks the memory controller(s)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := New(nil)
			tc.fake(d)
			ctx, cancel := context.WithCancel(context.Background())
			ch, err := d.Fingerprint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fp := <-ch
			cancel()
			for range ch {
			}
			if fp.Health != tc.wantHealth || fp.HealthDescription != tc.wantDesc || fp.Attributes["driver.exec"] != "" {
				t.Fatalf("fingerprint %+v, want %s %q without attributes", fp, tc.wantHealth, tc.wantDesc)
			}
		})
	}
}

func TestLogsAreRotated(t *testing.T) {
	h := newHarness(t)
	// 3000 lines of 1000 bytes through 1 MB files, at most 2 files kept.
	cfg := h.sh(`i=0; while [ $i -lt 3000 ]; do printf '%0999d\n' $i; i=$((i+1)); done`)
	cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = 2, 1
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v: %s", res, stderr(t, cfg))
	}
	entries, err := os.ReadDir(cfg.TaskDir.LogDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "web.stdout.") {
			names = append(names, e.Name())
		}
	}
	if strings.Join(names, ",") != "web.stdout.1,web.stdout.2" {
		t.Fatalf("log files %v, want web.stdout.1 and .2", names)
	}
}
