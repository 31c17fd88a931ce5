package exec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// cgroupGone reports whether none of cg's directories exists.
func cgroupGone(cg *isolation.Cgroup) bool {
	for _, dir := range append([]string{cg.Path}, mapValues(cg.Paths)...) {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return true
}

func TestRecoverRunningTaskKeepsItsPid(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`echo ready; exec sleep 1000`)
	th := h.start(cfg)
	st := handleState(t, th)
	testwait.FileContains(t, "task ready", cfg.StdoutPath, "ready")

	// A restarted agent: a new driver with only the persisted handle.
	d2 := newDriver(t)
	if err := d2.RecoverTask(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	status, err := d2.InspectTask(context.Background(), cfg.ID)
	if err != nil || status.State != drivers.TaskStateRunning {
		t.Fatalf("InspectTask = %+v, %v", status, err)
	}
	if got := status.DriverAttributes["pid"]; got != strconv.Itoa(st.Isolation.Pid) {
		t.Fatalf("recovered pid %s, want %d", got, st.Isolation.Pid)
	}
	if !isolation.Alive(st.Isolation.Pid, st.Isolation.StartTime) {
		t.Fatal("the task was restarted, not re-attached")
	}
	// Stats and exec work on the recovered task.
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := d2.TaskStats(ctx, cfg.ID, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := <-ch; !ok || u.MemoryRSS == 0 {
		t.Fatalf("stats of the recovered task: %+v", u)
	}
	cancel()
	for range ch {
	}
	res, err := d2.ExecTask(context.Background(), cfg.ID, []string{"cat", "/proc/1/comm"}, 10*time.Second)
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "sleep" {
		t.Fatalf("ExecTask = %+v, %v", res, err)
	}

	if err := d2.StopTask(context.Background(), cfg.ID, 200*time.Millisecond, "SIGINT"); err != nil {
		t.Fatal(err)
	}
	h2 := &harness{t: t, d: d2}
	if res := h2.wait(cfg.ID); res.ExitCode != 137 || res.Signal != int(syscall.SIGKILL) || res.Err != nil {
		t.Fatalf("recovered task exit %+v, want SIGKILL after the timeout", res)
	}
	if !cgroupGone(st.Isolation.Cgroup) {
		t.Error("cgroup still there after the task exited")
	}
	if err := d2.DestroyTask(context.Background(), cfg.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.Shim.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("shim state dir after DestroyTask: %v", err)
	}
}

func TestRecoverTaskThatExitedWhileDetached(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name   string
		script string
		mem    int64
		want   drivers.ExitResult
	}{
		{"exit code", `while [ ! -e /local/go ]; do sleep 0.05; done; exit 7`, 64, drivers.ExitResult{ExitCode: 7}},
		{"oom kill", `while [ ! -e /local/go ]; do sleep 0.05; done; exec tail /dev/zero`, 16,
			drivers.ExitResult{ExitCode: 137, Signal: 9, OOMKilled: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, d: h.d}
			cfg := h.sh(tc.script)
			cfg.Resources = &drivers.Resources{MemoryMB: tc.mem}
			th := h.start(cfg)
			st := handleState(t, th)
			// The agent is down (no driver waits) when the task exits.
			if err := os.WriteFile(filepath.Join(cfg.TaskDir.LocalDir, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			testwait.Exists(t, "the shim to record the exit", filepath.Join(st.Shim.StateDir, "exit.json"))
			testwait.Exit(t, "the shim to exit after recording the exit", st.Shim.ShimPID,
				func() bool { return isolation.Alive(st.Shim.ShimPID, st.Shim.ShimStartTicks) })
			d2 := newDriver(t)
			if err := d2.RecoverTask(context.Background(), th); err != nil {
				t.Fatal(err)
			}
			h2 := &harness{t: t, d: d2}
			if res := h2.wait(cfg.ID); *res != tc.want {
				t.Fatalf("recovered exit %+v, want %+v", res, tc.want)
			}
			status, err := d2.InspectTask(context.Background(), cfg.ID)
			if err != nil || status.State != drivers.TaskStateExited || status.ExitResult.ExitCode != tc.want.ExitCode {
				t.Fatalf("InspectTask = %+v, %v", status, err)
			}
			if !cgroupGone(st.Isolation.Cgroup) {
				t.Error("cgroup still there")
			}
			if err := d2.DestroyTask(context.Background(), cfg.ID, false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestShimKilled(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name string
		// recover: a restarted agent finds the shim dead; else the
		// running driver's WaitTask notices.
		recover bool
	}{
		{"found by a restarted agent", true},
		{"found by the running driver", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, d: h.d}
			cfg := h.sh(`sleep 1000 & echo ready; wait`)
			th := h.start(cfg)
			st := handleState(t, th)
			testwait.FileContains(t, "task ready", cfg.StdoutPath, "ready")
			pids, err := st.Isolation.Cgroup.Pids()
			if err != nil || len(pids) < 2 {
				t.Fatalf("cgroup pids %v, %v", pids, err)
			}
			if err := syscall.Kill(st.Shim.ShimPID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if tc.recover {
				testwait.Exit(t, "shim to die", st.Shim.ShimPID, func() bool { return isolation.Alive(st.Shim.ShimPID, st.Shim.ShimStartTicks) })
				// The task dies with its shim (parent-death signal), its
				// namespace with it, before any agent looks.
				for _, pid := range pids {
					testwait.Exit(t, "task process "+strconv.Itoa(pid)+" to die with its shim", pid, nil)
				}
				err := newDriver(t).RecoverTask(context.Background(), th)
				if !errors.Is(err, drivers.ErrTaskNotFound) || !errors.Is(err, shim.ErrShimDied) {
					t.Fatalf("RecoverTask = %v, want ErrTaskNotFound and ErrShimDied", err)
				}
				if _, err := os.Stat(st.Shim.StateDir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("dead shim's state dir: %v", err)
				}
			} else {
				res := h.wait(cfg.ID)
				if !errors.Is(res.Err, shim.ErrShimDied) {
					t.Fatalf("WaitTask = %+v, want an Err wrapping ErrShimDied", res)
				}
			}
			for _, pid := range pids {
				testwait.Exit(t, "task process "+strconv.Itoa(pid)+" gone", pid, nil)
			}
			if !cgroupGone(st.Isolation.Cgroup) {
				t.Error("cgroup of a task whose shim died is still there")
			}
		})
	}
}
