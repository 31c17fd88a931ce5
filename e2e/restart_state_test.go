package e2e

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// TestEmptyStateFileIsRefused: an agent whose state.db lost its contents
// (zero bytes) while its allocations' tasks run must not start as a new
// node (it would run every task a second time): it refuses, naming the
// file and -state-move-aside, and touches no task. After the operator
// moves the file aside, the agent starts as a new node and stops the old
// tasks it cannot re-attach to, leaving none running unsupervised.
func TestEmptyStateFileIsRefused(t *testing.T) {
	t.Parallel()
	const n = 3
	a := newPersistentAgent(t, "emptied", roleCombined)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)
	marker := sleepMarker()
	runJob(t, a, "emptied", surviveJob("emptied", n,
		"      attempts = 0\n      mode     = \"fail\"",
		"exec "+strings.Join(marker, " ")))
	pids := runningPids(t, c, apiPids(c), "emptied", n)
	checkTree(t, a.dataDir, marker, pids)

	a.kill9(t)
	statePath := a.dataDir + "/client/state.db"
	if err := os.Truncate(statePath, 0); err != nil {
		t.Fatal(err)
	}
	a.start(t)
	select {
	case <-a.exited:
	case <-time.After(surviveStartTimeout):
		t.Fatalf("the agent started on an emptied state file; its output:\n%s", a.sinceLastStart())
	}
	out := a.sinceLastStart()
	if a.err == nil || !strings.Contains(out, statePath) || !strings.Contains(out, "-state-move-aside") || !strings.Contains(out, "empty") {
		t.Fatalf("the agent exited with %v; want a refusal naming %s and -state-move-aside:\n%s", a.err, statePath, out)
	}
	if info, err := os.Stat(statePath); err != nil || info.Size() != 0 {
		t.Errorf("the refused state file changed: %v, %v", info, err)
	}
	checkTree(t, a.dataDir, marker, pids) // untouched

	mv := exec.Command(droverBin, "agent", "-config", a.configPath, "-state-move-aside")
	if b, err := mv.CombinedOutput(); err != nil {
		t.Fatalf("-state-move-aside: %v\n%s", err, b)
	}
	a.start(t)
	waitFor(t, surviveStartTimeout, "the agent to serve again", func() (bool, string) {
		a.checkAlive(t)
		leader, err := c.Status().Leader()
		if err != nil {
			return false, err.Error()
		}
		return leader != "", "no leader yet"
	})
	// Reconciled at start: nothing of the old node's tasks runs.
	waitPidsGone(t, "the old tasks to be stopped", sortedPids(pids)...)
	tt, err := scanTasks(a.dataDir, marker)
	if err != nil {
		t.Fatal(err)
	}
	for shimPid := range tt.shims {
		if err := waitProcsExit([]int{shimPid}, 30*time.Second); err != nil {
			t.Errorf("a shim of the old node still runs: %v", err)
		}
	}
	if got := strings.Count(a.sinceLastStart(), "stopped a shim the client state does not know"); got != n {
		t.Errorf("the agent logged %d stopped unknown shims, want %d", got, n)
	}
	if r := a.cli(t, "job", "stop", "-purge", "-detach", "emptied"); r.code != 0 {
		t.Errorf("job stop:\n%s", r)
	}
}

// TestShimKill9ReportsKilled: SIGKILL to a task's shim while the agent
// runs kills the task (its parent-death signal), and the agent reports
// just that: a Terminated event with signal 9 and exit code 137 saying
// that the shim died, never exit code 0; the restart policy (no attempts)
// then fails the alloc.
func TestShimKill9ReportsKilled(t *testing.T) {
	t.Parallel()
	a := newPersistentAgent(t, "shimkill", roleCombined)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)
	marker := sleepMarker()
	runJob(t, a, "shimkill", surviveJob("shimkill", 1,
		"      attempts = 0\n      mode     = \"fail\"",
		"exec "+strings.Join(marker, " ")))
	pids := runningPids(t, c, apiPids(c), "shimkill", 1)
	id, pid := onlyAlloc(pids)
	tt := checkTree(t, a.dataDir, marker, pids)
	shimPid := tt.tasks[pid]
	if shimPid == 0 {
		t.Fatalf("no shim found for task pid %d", pid)
	}
	if err := syscall.Kill(shimPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var term *api.TaskEvent
	waitFor(t, surviveRunTimeout, "the alloc to fail with a Terminated event", func() (bool, string) {
		al, _, err := c.Allocations().Info(id, nil)
		if err != nil {
			return false, err.Error()
		}
		ts := al.TaskStates["t"]
		if ts == nil || al.ClientStatus != api.AllocClientStatusFailed {
			return false, "alloc " + al.ClientStatus
		}
		for _, e := range ts.Events {
			if e.Type == "Terminated" {
				term = e
			}
		}
		return term != nil, "events:" + eventsString(ts)
	})
	if term.ExitCode != 137 || term.Signal != 9 || !strings.Contains(strings.ToLower(term.DisplayMessage), "shim") {
		t.Errorf("Terminated: exit code %d, signal %d, %q; want 137, 9 and a message about the shim", term.ExitCode, term.Signal, term.DisplayMessage)
	}
	if err := waitProcsExit([]int{pid}, 30*time.Second); err != nil {
		t.Errorf("the task survived its shim: %v", err)
	}
	if r := a.cli(t, "job", "stop", "-detach", "shimkill"); r.code != 0 {
		t.Errorf("job stop:\n%s", r)
	}
}
