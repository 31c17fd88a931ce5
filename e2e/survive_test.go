package e2e

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// Timeouts of the survival tests: generous, as the machine running them
// may be loaded and the binary built with -race.
const (
	surviveStartTimeout = 90 * time.Second
	surviveRunTimeout   = 2 * time.Minute
)

// sleepMarker returns a command line unique to one test run ("/bin/sleep
// <n>"), so the test can count its task processes among every other
// process on the machine, duplicates started outside a shim included.
func sleepMarker() []string {
	return []string{"/bin/sleep", strconv.Itoa(900000 + rand.IntN(99999))}
}

// pidTaskArgs is a raw_exec task's args: write the shell's pid into
// $NOMAD_TASK_DIR/pid, then run script (exec'ing into the marker keeps the
// pid).
func pidTaskArgs(script string) string {
	return strconv.Quote("echo $$ > \"$NOMAD_TASK_DIR/pid\"; " + script)
}

// surviveJob is a service job of count allocs, one raw_exec task "t" each,
// with the given restart block and shell script.
func surviveJob(id string, count int, restart, script string) string {
	return fmt.Sprintf(`job %q {
  type = "service"

  group "g" {
    count = %d

    restart {
%s
    }

    task "t" {
      driver       = "raw_exec"
      kill_timeout = "5s"

      config {
        command = "/bin/sh"
        args    = ["-c", %s]
      }

      resources {
        cpu    = 10
        memory = 10
      }
    }
  }
}
`, id, count, restart, pidTaskArgs(script))
}

// runJob registers an HCL job through the CLI without waiting for it.
func runJob(t *testing.T, a *persistentAgent, name, hcl string) {
	t.Helper()
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, name+".nomad.hcl", hcl)); r.code != 0 {
		t.Fatalf("job run %s:\n%s", name, r)
	}
}

// pidReader returns the pid task "t" of an alloc wrote into its local dir.
type pidReader func(allocID string) (int, error)

// apiPids reads the pid file through the file API of c (an agent running
// a server and the alloc's client).
func apiPids(c *api.Client) pidReader {
	return func(id string) (int, error) {
		alloc, _, err := c.Allocations().Info(id, nil)
		if err != nil {
			return 0, err
		}
		rc, err := c.AllocFS().Cat(alloc, "t/local/pid", nil)
		if err != nil {
			return 0, err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return 0, err
		}
		return parsePid(id, b)
	}
}

// diskPids reads the pid file from the data dir of the alloc's client: a
// client-only agent's file API answers 503 (it asks a server it does not
// run for the alloc).
func diskPids(dataDir string) pidReader {
	return func(id string) (int, error) {
		path, err := findAllocFile(dataDir, id, "t/local/pid")
		if err != nil {
			return 0, err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		return parsePid(id, b)
	}
}

func parsePid(id string, b []byte) (int, error) {
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("alloc %s: pid file holds %q", id[:8], b)
	}
	return pid, nil
}

// runningPids waits until the job has exactly n allocs, all running, each
// with a task whose pid file names a live process, and returns the pids by
// alloc ID. c is the API of the server that knows the job.
func runningPids(t *testing.T, c *api.Client, taskPid pidReader, jobID string, n int) map[string]int {
	t.Helper()
	var pids map[string]int
	waitFor(t, surviveRunTimeout, fmt.Sprintf("%d running allocs of %s with live task pids", n, jobID), func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil {
			return false, err.Error()
		}
		if len(allocs) != n {
			return false, fmt.Sprintf("%d allocs", len(allocs))
		}
		pids = map[string]int{}
		for _, al := range allocs {
			if al.ClientStatus != api.AllocClientStatusRunning {
				return false, fmt.Sprintf("alloc %s is %s", al.ID[:8], al.ClientStatus)
			}
			pid, err := taskPid(al.ID)
			if err != nil {
				return false, fmt.Sprintf("alloc %s: %v", al.ID[:8], err)
			}
			if !alive(pid) {
				return false, fmt.Sprintf("alloc %s: pid %d is not running", al.ID[:8], pid)
			}
			pids[al.ID] = pid
		}
		return true, ""
	})
	return pids
}

// checkTree fails the test unless the agent's data dir has exactly one
// shim per pid, each pid a shim's child, and (with a marker) exactly
// these pids run the marker command.
func checkTree(t *testing.T, dataDir string, marker []string, pids map[string]int) *taskTree {
	t.Helper()
	tt, err := scanTasks(dataDir, marker)
	if err != nil {
		t.Fatal(err)
	}
	want := sortedPids(pids)
	var children []int
	for pid := range tt.tasks {
		children = append(children, pid)
	}
	sort.Ints(children)
	if len(tt.shims) != len(want) {
		t.Errorf("%d shims run under the data dir, want %d", len(tt.shims), len(want))
	}
	if !slices.Equal(children, want) {
		t.Errorf("the shims' children are %v, want the tasks' pids %v", children, want)
	}
	if marker != nil {
		sort.Ints(tt.marked)
		if !slices.Equal(tt.marked, want) {
			t.Errorf("processes running %q: %v, want exactly %v", strings.Join(marker, " "), tt.marked, want)
		}
	}
	return tt
}

func sortedPids(pids map[string]int) []int {
	out := make([]int, 0, len(pids))
	for _, p := range pids {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// stopJobAndCheckGone stops the job through c and waits until every alloc
// is complete and no shim or task of dataDir (nor any marker process, nor
// any of pids) is left.
func stopJobAndCheckGone(t *testing.T, a *persistentAgent, c *api.Client, jobID, dataDir string, marker []string, pids []int) {
	t.Helper()
	if r := a.cli(t, "job", "stop", "-detach", jobID); r.code != 0 {
		t.Fatalf("job stop %s:\n%s", jobID, r)
	}
	waitFor(t, surviveRunTimeout, "every task and shim of "+jobID+" to be gone and its allocs complete", func() (bool, string) {
		tt, err := scanTasks(dataDir, marker)
		if err != nil {
			return false, err.Error()
		}
		if len(tt.shims)+len(tt.tasks)+len(tt.marked) > 0 {
			return false, fmt.Sprintf("%d shims, %d shim children, %d marker processes left", len(tt.shims), len(tt.tasks), len(tt.marked))
		}
		for _, pid := range pids {
			if alive(pid) {
				return false, fmt.Sprintf("task pid %d still runs", pid)
			}
		}
		allocs, _, err := c.Jobs().Allocations(jobID, true, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, al := range allocs {
			if al.ClientStatus != api.AllocClientStatusComplete {
				return false, fmt.Sprintf("alloc %s is %s", al.ID[:8], al.ClientStatus)
			}
		}
		return true, ""
	})
}

// waitPidsGone waits until none of pids runs.
func waitPidsGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	waitFor(t, 30*time.Second, what, func() (bool, string) {
		for _, pid := range pids {
			if alive(pid) {
				return false, fmt.Sprintf("pid %d still runs", pid)
			}
		}
		return true, ""
	})
}

// taskEvents returns the events of task "t" of alloc id.
func taskEvents(c *api.Client, id string) (*api.TaskState, error) {
	alloc, _, err := c.Allocations().Info(id, nil)
	if err != nil {
		return nil, err
	}
	ts := alloc.TaskStates["t"]
	if ts == nil {
		return nil, fmt.Errorf("alloc %s has no state for task t", id[:8])
	}
	return ts, nil
}

func eventsString(ts *api.TaskState) string {
	var b strings.Builder
	for _, e := range ts.Events {
		fmt.Fprintf(&b, "\n  %s: %s", e.Type, e.DisplayMessage)
	}
	return b.String()
}

func countEvents(ts *api.TaskState, typ string) int {
	n := 0
	for _, e := range ts.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// onlyAlloc returns the ID of the job's one alloc.
func onlyAlloc(pids map[string]int) (string, int) {
	for id, pid := range pids {
		return id, pid
	}
	return "", 0
}

// TestTasksSurviveAgentKill9 runs 20 raw_exec tasks under a persistent
// agent, SIGKILLs the agent (its process only), starts it again on the
// same data dir, and checks that it re-attached to the very same
// processes: same pids, all allocs running, no task started twice, one
// shim per task. Stopping the job then leaves no task or shim behind.
func TestTasksSurviveAgentKill9(t *testing.T) {
	t.Parallel()
	const n = 20
	a := newPersistentAgent(t, "survivor", roleCombined)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)

	marker := sleepMarker()
	runJob(t, a, "survive", surviveJob("survive", n,
		"      attempts = 0\n      mode     = \"fail\"",
		"exec "+strings.Join(marker, " ")))
	before := runningPids(t, c, apiPids(c), "survive", n)
	checkTree(t, a.dataDir, marker, before)
	if t.Failed() {
		t.FailNow()
	}

	a.kill9(t)
	for id, pid := range before {
		if !alive(pid) {
			t.Errorf("alloc %s: task pid %d died with the agent", id[:8], pid)
		}
	}
	checkTree(t, a.dataDir, marker, before)

	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	waitFor(t, surviveRunTimeout, fmt.Sprintf("the agent to re-attach to %d tasks", n), func() (bool, string) {
		a.checkAlive(t)
		got := strings.Count(a.sinceLastStart(), "re-attached to task")
		return got >= n, fmt.Sprintf("%d re-attached", got)
	})
	after := runningPids(t, c, apiPids(c), "survive", n)
	if !maps.Equal(before, after) {
		t.Errorf("task pids changed across the restart:\nbefore %v\nafter  %v", before, after)
	}
	checkTree(t, a.dataDir, marker, before)
	for id := range after {
		ts, err := taskEvents(c, id)
		if err != nil {
			t.Fatal(err)
		}
		if ts.State != "running" || ts.Restarts != 0 || countEvents(ts, "Started") != 1 {
			t.Errorf("alloc %s: task %s, %d restarts, %d Started events, want running, 0, 1:%s",
				id[:8], ts.State, ts.Restarts, countEvents(ts, "Started"), eventsString(ts))
		}
	}
	if n := strings.Count(a.sinceLastStart(), "re-attached to task"); n != len(before) {
		t.Errorf("the agent logged %d re-attachments, want %d", n, len(before))
	}

	stopJobAndCheckGone(t, a, c, "survive", a.dataDir, marker, sortedPids(before))
}

// TestTaskExitsWhileAgentDown lets a task exit with code 7 while its agent
// is dead: the shim records the exit, and the restarted agent reports it
// (one Terminated event, exit code 7) and applies the restart policy: with
// an attempt left, Restarting and the task runs again as a new process;
// with none (mode "fail"), Not Restarting and the alloc fails.
func TestTaskExitsWhileAgentDown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		restart   string
		wantEvent string // the restart policy's verdict after Terminated
		restarted bool   // whether the task runs again
	}{
		{
			name:      "restarts",
			restart:   "      attempts = 1\n      interval = \"10m\"\n      delay    = \"1s\"\n      mode     = \"fail\"",
			wantEvent: "Restarting",
			restarted: true,
		},
		{
			name:      "fails",
			restart:   "      attempts = 0\n      mode     = \"fail\"",
			wantEvent: "Not Restarting",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newPersistentAgent(t, "exiter", roleCombined)
			a.start(t)
			a.waitReady(t, surviveStartTimeout)
			c := a.client(t)

			// The task exits 7 once a file named "exit" appears in its
			// local dir; it removes the file first, so a next run waits
			// again.
			script := `while [ ! -e "$NOMAD_TASK_DIR/exit" ]; do sleep 0.2; done; rm -f "$NOMAD_TASK_DIR/exit"; exit 7`
			runJob(t, a, "exiter", surviveJob("exiter", 1, tc.restart, script))
			id, pid := onlyAlloc(runningPids(t, c, apiPids(c), "exiter", 1))
			taskDir, err := procEnv(pid, "NOMAD_TASK_DIR")
			if err != nil {
				t.Fatal(err)
			}

			a.kill9(t)
			if err := writeTrigger(taskDir + "/exit"); err != nil {
				t.Fatal(err)
			}
			waitPidsGone(t, "the task to exit while the agent is down", pid)
			waitFor(t, 30*time.Second, "its shim to exit after recording the exit", func() (bool, string) {
				tt, err := scanTasks(a.dataDir, nil)
				if err != nil {
					return false, err.Error()
				}
				return len(tt.shims) == 0, fmt.Sprintf("%d shims run", len(tt.shims))
			})

			a.start(t)
			a.waitReady(t, surviveStartTimeout)
			var newPid int
			waitFor(t, surviveRunTimeout, "the recorded exit and the restart policy's verdict", func() (bool, string) {
				ts, err := taskEvents(c, id)
				if err != nil {
					return false, err.Error()
				}
				var term *api.TaskEvent
				for _, e := range ts.Events {
					if e.Type == "Terminated" {
						term = e
					}
				}
				if term == nil || countEvents(ts, tc.wantEvent) == 0 {
					return false, "events:" + eventsString(ts)
				}
				if term.ExitCode != 7 {
					t.Fatalf("Terminated event with exit code %d, want 7:%s", term.ExitCode, eventsString(ts))
				}
				if n := countEvents(ts, "Terminated"); n != 1 {
					t.Fatalf("%d Terminated events, want 1:%s", n, eventsString(ts))
				}
				if !tc.restarted {
					alloc, _, err := c.Allocations().Info(id, nil)
					if err != nil {
						return false, err.Error()
					}
					if ts.State != "dead" || !ts.Failed || alloc.ClientStatus != api.AllocClientStatusFailed {
						return false, fmt.Sprintf("task %s (failed %v), alloc %s; events:%s", ts.State, ts.Failed, alloc.ClientStatus, eventsString(ts))
					}
					t.Logf("task events after the restart:%s", eventsString(ts))
					return true, ""
				}
				if ts.State != "running" || countEvents(ts, "Started") < 2 {
					return false, "events:" + eventsString(ts)
				}
				p, err := apiPids(c)(id)
				if err != nil || p == pid || !alive(p) {
					return false, fmt.Sprintf("pid file: %d (%v), old pid %d", p, err, pid)
				}
				newPid = p
				t.Logf("task events after the restart:%s", eventsString(ts))
				return true, ""
			})
			if !tc.restarted {
				checkTree(t, a.dataDir, nil, nil)
				if r := a.cli(t, "job", "stop", "-detach", "exiter"); r.code != 0 {
					t.Errorf("job stop:\n%s", r)
				}
				return
			}
			checkTree(t, a.dataDir, nil, map[string]int{id: newPid})
			stopJobAndCheckGone(t, a, c, "exiter", a.dataDir, nil, []int{pid, newPid})
		})
	}
}

// TestShimKilledWhileAgentDown SIGKILLs a task's shim while the agent is
// dead (the task dies with it): the restarted agent says the shim died and
// treats it as a failed exit of the task, handled by its restart policy:
// with attempts left the task restarts (a Restarting event, one restart
// counted) as a new process under a new shim; with none (mode fail) it is
// not restarted and the alloc fails.
func TestShimKilledWhileAgentDown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		restart   string
		restarted bool
	}{
		{
			name:      "attempts left",
			restart:   "      attempts = 2\n      interval = \"10m\"\n      delay    = \"1s\"\n      mode     = \"fail\"",
			restarted: true,
		},
		{
			name:    "no attempts",
			restart: "      attempts = 0\n      mode     = \"fail\"",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shimKilledWhileAgentDown(t, tc.restart, tc.restarted)
		})
	}
}

func shimKilledWhileAgentDown(t *testing.T, restart string, restarted bool) {
	a := newPersistentAgent(t, "shimless", roleCombined)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)

	marker := sleepMarker()
	runJob(t, a, "shimless", surviveJob("shimless", 1, restart, "exec "+strings.Join(marker, " ")))
	pids := runningPids(t, c, apiPids(c), "shimless", 1)
	id, pid := onlyAlloc(pids)
	tt := checkTree(t, a.dataDir, marker, pids)
	shim := tt.tasks[pid]
	if shim == 0 {
		t.Fatalf("no shim found for task pid %d", pid)
	}
	deadShimDir := tt.shims[shim]

	a.kill9(t)
	if err := syscall.Kill(shim, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 shim %d: %v", shim, err)
	}
	waitPidsGone(t, "the shim and its task to die", shim, pid)

	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	// saidShimDied reports whether an event says the shim died.
	saidShimDied := func(ts *api.TaskState) bool {
		for _, e := range ts.Events {
			msg := strings.ToLower(e.DisplayMessage + " " + e.DriverMessage + " " + e.DriverError)
			if strings.Contains(msg, "shim") && (strings.Contains(msg, "exited") || strings.Contains(msg, "died")) {
				return true
			}
		}
		return false
	}
	if !restarted {
		waitFor(t, surviveRunTimeout, "an event about the dead shim and the alloc failed", func() (bool, string) {
			al, _, err := c.Allocations().Info(id, nil)
			if err != nil {
				return false, err.Error()
			}
			ts := al.TaskStates["t"]
			if ts == nil || !saidShimDied(ts) || al.ClientStatus != api.AllocClientStatusFailed {
				return false, "alloc " + al.ClientStatus + ", events:" + eventsString(ts)
			}
			t.Logf("task events after the restart:%s", eventsString(ts))
			return true, ""
		})
		ts, err := taskEvents(c, id)
		if err != nil {
			t.Fatal(err)
		}
		if ts.State != "dead" || !ts.Failed || ts.Restarts != 0 || countEvents(ts, "Not Restarting") != 1 ||
			countEvents(ts, "Restarting") != 0 || countEvents(ts, "Started") != 1 {
			t.Errorf("task: state %s failed %v restarts %d; want dead, failed, no restart, one Started and Not Restarting:%s",
				ts.State, ts.Failed, ts.Restarts, eventsString(ts))
		}
		checkTree(t, a.dataDir, marker, nil)
		if _, err := os.Stat(deadShimDir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the dead shim's state dir %s is still there (%v)", deadShimDir, err)
		}
		if r := a.cli(t, "job", "stop", "-detach", "shimless"); r.code != 0 {
			t.Errorf("job stop:\n%s", r)
		}
		return
	}
	var newPid int
	waitFor(t, surviveRunTimeout, "an event about the dead shim and the task restarted", func() (bool, string) {
		ts, err := taskEvents(c, id)
		if err != nil {
			return false, err.Error()
		}
		if !saidShimDied(ts) || ts.State != "running" || countEvents(ts, "Started") < 2 {
			return false, "events:" + eventsString(ts)
		}
		p, err := apiPids(c)(id)
		if err != nil || p == pid || !alive(p) {
			return false, fmt.Sprintf("pid file: %d (%v), old pid %d", p, err, pid)
		}
		newPid = p
		t.Logf("task events after the restart:%s", eventsString(ts))
		return true, ""
	})
	ts, err := taskEvents(c, id)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Restarts != 1 || ts.Failed || countEvents(ts, "Restarting") != 1 || countEvents(ts, "Terminated") != 1 {
		t.Errorf("task: restarts %d failed %v; want one restart with one Terminated and one Restarting event:%s",
			ts.Restarts, ts.Failed, eventsString(ts))
	}
	tt = checkTree(t, a.dataDir, marker, map[string]int{id: newPid})
	if tt.tasks[newPid] == shim {
		t.Errorf("the new task runs under the killed shim's pid %d", shim)
	}
	if _, err := os.Stat(deadShimDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dead shim's state dir %s is still there (%v)", deadShimDir, err)
	}

	stopJobAndCheckGone(t, a, c, "shimless", a.dataDir, marker, []int{pid, newPid})
}

// TestServerStopsJobWhileClientDown runs tasks on a client-only agent,
// SIGKILLs it, stops the job through the server meanwhile, and starts the
// client again: it stops the tasks it re-attached to, reports the allocs
// complete, and leaves no process behind.
func TestServerStopsJobWhileClientDown(t *testing.T) {
	t.Parallel()
	const n = 3
	srv := newPersistentAgent(t, "server", roleServer)
	srv.start(t)
	srv.waitReady(t, surviveStartTimeout)
	sc := srv.client(t)
	cl := newPersistentAgent(t, "worker", roleClient, srv.rpcAddr())
	cl.start(t)
	cl.waitNodeReady(t, sc, cl.name, surviveStartTimeout)

	marker := sleepMarker()
	runJob(t, srv, "stopped", surviveJob("stopped", n,
		"      attempts = 0\n      mode     = \"fail\"",
		"exec "+strings.Join(marker, " ")))
	pids := runningPids(t, sc, diskPids(cl.dataDir), "stopped", n)
	checkTree(t, cl.dataDir, marker, pids)

	cl.kill9(t)
	if r := srv.cli(t, "job", "stop", "-detach", "stopped"); r.code != 0 {
		t.Fatalf("job stop:\n%s", r)
	}
	waitFor(t, 30*time.Second, "the server to want every alloc stopped", func() (bool, string) {
		allocs, _, err := sc.Jobs().Allocations("stopped", true, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, al := range allocs {
			if al.DesiredStatus != api.AllocDesiredStatusStop {
				return false, fmt.Sprintf("alloc %s desired %s", al.ID[:8], al.DesiredStatus)
			}
		}
		return true, ""
	})
	// Nothing can stop the tasks while their client is down.
	checkTree(t, cl.dataDir, marker, pids)

	cl.start(t)
	waitFor(t, surviveRunTimeout, "every task and shim to be gone and every alloc complete", func() (bool, string) {
		cl.checkAlive(t)
		tt, err := scanTasks(cl.dataDir, marker)
		if err != nil {
			return false, err.Error()
		}
		if len(tt.shims)+len(tt.tasks)+len(tt.marked) > 0 {
			return false, fmt.Sprintf("%d shims, %d shim children, %d marker processes left", len(tt.shims), len(tt.tasks), len(tt.marked))
		}
		allocs, _, err := sc.Jobs().Allocations("stopped", true, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, al := range allocs {
			if al.ClientStatus != api.AllocClientStatusComplete {
				return false, fmt.Sprintf("alloc %s is %s", al.ID[:8], al.ClientStatus)
			}
		}
		return true, ""
	})
	waitPidsGone(t, "the tasks to be gone", sortedPids(pids)...)
	// The restarted client re-attached before stopping: the tasks were
	// stopped through their shims, not found dead.
	for id := range pids {
		ts, err := taskEvents(sc, id)
		if err != nil {
			t.Fatal(err)
		}
		if countEvents(ts, "Started") != 1 || countEvents(ts, "Killed") == 0 {
			t.Errorf("alloc %s: want one Started and a Killed event:%s", id[:8], eventsString(ts))
		}
	}
}

// TestJobStoppedAsAgentRestarts SIGKILLs an agent running tasks, starts it
// again and stops the job as soon as the API answers, while the client may
// still be re-attaching: every task is stopped through its shim (none is
// started again, none is left running) and every alloc completes.
func TestJobStoppedAsAgentRestarts(t *testing.T) {
	t.Parallel()
	const n = 5
	a := newPersistentAgent(t, "stopper", roleCombined)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)

	marker := sleepMarker()
	runJob(t, a, "early", surviveJob("early", n,
		"      attempts = 0\n      mode     = \"fail\"",
		"exec "+strings.Join(marker, " ")))
	pids := runningPids(t, c, apiPids(c), "early", n)
	checkTree(t, a.dataDir, marker, pids)

	a.kill9(t)
	a.start(t)
	waitFor(t, surviveStartTimeout, "the restarted agent's API to know its leader", func() (bool, string) {
		a.checkAlive(t)
		leader, err := c.Status().Leader()
		if err != nil {
			return false, err.Error()
		}
		return leader != "", "no leader yet"
	})
	stopJobAndCheckGone(t, a, c, "early", a.dataDir, marker, sortedPids(pids))
	for id := range pids {
		ts, err := taskEvents(c, id)
		if err != nil {
			t.Fatal(err)
		}
		if countEvents(ts, "Started") != 1 || ts.State != "dead" || ts.Failed {
			t.Errorf("alloc %s: task %s (failed %v), want dead, not failed, started once:%s", id[:8], ts.State, ts.Failed, eventsString(ts))
		}
	}
}
