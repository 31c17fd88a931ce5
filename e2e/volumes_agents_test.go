package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// sharedVolumeDir returns a fresh directory every task user may write,
// for a host volume.
func sharedVolumeDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // exec tasks run as nobody
		t.Fatal(err)
	}
	return dir
}

// TestHostVolumePlacementTwoAgents: of two nodes, only node-b offers the
// host volume "shared": both allocations of a job that asks for it are
// placed there, and write into node-b's directory.
func TestHostVolumePlacementTwoAgents(t *testing.T) {
	t.Parallel()
	requireTwoAgents(t)
	requireExecDriver(t)
	shared := sharedVolumeDir(t)
	a, _, _ := startTwoNodes(t, twoNodes{driver: "exec", clientB: fmt.Sprintf(`  host_volume "shared" {
    path = %q
  }`, shared)})
	c := a.client(t)

	job := strings.Replace(volumeJob("placed", "exec", `echo "$NOMAD_ALLOC_ID" > "/data/$NOMAD_ALLOC_ID"`), `group "g" {`, `group "g" {
    count = 2`, 1)
	// This job has no read-only certs volume on these nodes: drop it.
	job = strings.Replace(job, `volume "certs" {
      type      = "host"
      source    = "certs"
      read_only = true
    }`, "", 1)
	job = strings.Replace(job, `volume_mount {
        volume      = "certs"
        destination = "/certs"
      }`, "", 1)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "placed.nomad.hcl", job)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	waitFor(t, 3*time.Minute, "both allocations complete", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("placed", true, nil)
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		done := 0
		for _, al := range allocs {
			seen = append(seen, al.NodeName+":"+al.ClientStatus)
			if al.NodeName != "node-b" {
				t.Fatalf("alloc %s was placed on %s, which lacks the host volume", al.ID, al.NodeName)
			}
			if al.ClientStatus == api.AllocClientStatusFailed {
				t.Fatalf("alloc %s failed: %s", al.ID, a.cli(t, "alloc", "status", al.ID).stdout)
			}
			if al.ClientStatus == api.AllocClientStatusComplete {
				done++
			}
		}
		return done == 2, strings.Join(seen, ", ")
	})
	allocs, _, err := c.Jobs().Allocations("placed", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, al := range allocs {
		if got := strings.TrimSpace(readHostFile(t, filepath.Join(shared, al.ID))); got != al.ID {
			t.Errorf("alloc %s wrote %q into node-b's volume", al.ID, got)
		}
	}
}

// TestHostVolumeMountAcrossAgentRestart: an exec task's volume mount lives
// in the task's mount namespace. It stays while the agent is SIGKILLed
// and started again (the task re-attached keeps writing through it), the
// host never sees it, and nothing is left mounted once the job stops.
func TestHostVolumeMountAcrossAgentRestart(t *testing.T) {
	t.Parallel()
	a := newPersistentAgent(t, "volumes", roleCombined)
	requireExecDriver(t)
	shared := sharedVolumeDir(t)
	f, err := os.OpenFile(a.configPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(f, "\nclient {\n  host_volume \"shared\" {\n    path = %q\n  }\n}\n", shared)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)

	marker := sleepMarker()
	// Writes a tick into the volume every 0.2s, then runs the marker in
	// the background so that the host can find the task by it.
	script := fmt.Sprintf(`%s & while :; do date +%%s%%N > /data/tick; sleep 0.2; done`, strings.Join(marker, " "))
	job := fmt.Sprintf(`job "mnt" {
  type = "service"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type   = "host"
      source = "shared"
    }
    task "t" {
      driver       = "exec"
      kill_timeout = "2s"
      config {
        command = "/bin/sh"
        args    = ["-c", %s]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
      resources {
        cpu    = 10
        memory = 32
      }
    }
  }
}
`, strconv.Quote(script))
	runJob(t, a, "mnt", job)
	alloc := runningAllocOf(t, c, "mnt")
	pid := taskPidOf(t, a.dataDir, marker)
	hasDataMount := func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
		if err != nil {
			t.Fatalf("the task's mount table: %v", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if fields := strings.Fields(l); len(fields) > 4 && fields[4] == "/data" {
				return true
			}
		}
		return false
	}
	ticking := func(what string) {
		t.Helper()
		before := readHostFile(t, filepath.Join(shared, "tick"))
		waitFor(t, 30*time.Second, what, func() (bool, string) {
			now, err := os.ReadFile(filepath.Join(shared, "tick"))
			return err == nil && string(now) != before, "the tick did not change"
		})
	}
	waitFor(t, 30*time.Second, "the task to write into the volume", func() (bool, string) {
		_, err := os.Stat(filepath.Join(shared, "tick"))
		return err == nil, fmt.Sprint(err)
	})
	if !hasDataMount() {
		t.Fatal("the task's mount namespace has no /data")
	}
	if m := mountsOf(t, alloc.ID); len(m) > 0 {
		t.Errorf("the host sees the task's mounts:\n%s", strings.Join(m, "\n"))
	}

	a.kill9(t)
	ticking("the task to write through its volume while the agent is dead")
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	waitFor(t, surviveRunTimeout, "the agent to re-attach to the task", func() (bool, string) {
		a.checkAlive(t)
		return strings.Contains(a.sinceLastStart(), "re-attached to task"), "not yet"
	})
	if got := runningAllocOf(t, c, "mnt"); got.ID != alloc.ID {
		t.Fatalf("the alloc was replaced: %s, was %s", got.ID, alloc.ID)
	}
	if !hasDataMount() {
		t.Fatal("the task lost its /data mount across the agent's restart")
	}
	ticking("the task to write through its volume after the agent's restart")
	if m := mountsOf(t, alloc.ID); len(m) > 0 {
		t.Errorf("the host sees the task's mounts after the restart:\n%s", strings.Join(m, "\n"))
	}

	stopJobAndCheckGone(t, a, c, "mnt", a.dataDir, marker, []int{pid})
	if m := mountsOf(t, alloc.ID); len(m) > 0 {
		t.Errorf("mounts left after the job stopped:\n%s", strings.Join(m, "\n"))
	}
	if _, err := os.Stat(filepath.Join(shared, "tick")); err != nil {
		t.Errorf("the volume's content is gone after the job stopped: %v", err)
	}
}

// taskPidOf waits for the one process running marker and returns its
// (host) pid: a process of the task, in the task's namespaces.
func taskPidOf(t *testing.T, dataDir string, marker []string) int {
	t.Helper()
	var pid int
	waitFor(t, surviveRunTimeout, "the exec task to run under its shim", func() (bool, string) {
		tt, err := scanTasks(dataDir, marker)
		if err != nil {
			return false, err.Error()
		}
		if len(tt.marked) != 1 {
			return false, fmt.Sprintf("%d processes run the marker", len(tt.marked))
		}
		pid = tt.marked[0]
		return true, ""
	})
	return pid
}

// TestHostVolumeAddedLater: a job asking for a host volume no node offers
// waits (its evaluation blocked, job status naming the volume); once the
// operator adds the host_volume to the agent's config and restarts the
// agent, the job is placed and writes into the volume, as docs/volumes.md
// says.
func TestHostVolumeAddedLater(t *testing.T) {
	t.Parallel()
	a := newPersistentAgent(t, "vol-later", roleCombined)
	requireExecDriver(t)
	shared := sharedVolumeDir(t)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)

	job := fmt.Sprintf(`job "later" {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type   = "host"
      source = "shared"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %s]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
      resources {
        cpu    = 10
        memory = 32
      }
    }
  }
}
`, strconv.Quote(`echo "$NOMAD_ALLOC_ID" > /data/later`))
	runJob(t, a, "later", job)
	waitFor(t, time.Minute, "the job's evaluation to block on the missing volume", func() (bool, string) {
		evals, _, err := c.Jobs().Evaluations("later", nil)
		if err != nil {
			return false, err.Error()
		}
		var st []string
		for _, e := range evals {
			st = append(st, e.Status)
			if e.Status == api.EvalStatusBlocked {
				return true, ""
			}
		}
		return false, "evaluations: " + strings.Join(st, ", ")
	})
	if r := a.cli(t, "job", "status", "later"); !strings.Contains(r.stdout, "missing compatible host volumes: shared") {
		t.Errorf("job status does not name the missing volume:\n%s", r)
	}
	if allocs, _, err := c.Jobs().Allocations("later", true, nil); err != nil || len(allocs) != 0 {
		t.Fatalf("the job was placed without its volume: %d allocations (%v)", len(allocs), err)
	}

	a.interrupt(t)
	f, err := os.OpenFile(a.configPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(f, "\nclient {\n  host_volume \"shared\" {\n    path = %q\n  }\n}\n", shared)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)

	waitFor(t, 3*time.Minute, "the job to be placed and complete", func() (bool, string) {
		a.checkAlive(t)
		allocs, _, err := c.Jobs().Allocations("later", true, nil)
		if err != nil {
			return false, err.Error()
		}
		if len(allocs) != 1 {
			return false, fmt.Sprintf("%d allocations", len(allocs))
		}
		al := allocs[0]
		if al.ClientStatus == api.AllocClientStatusFailed {
			t.Fatalf("alloc %s failed: %s", al.ID, a.cli(t, "alloc", "status", al.ID).stdout)
		}
		return al.ClientStatus == api.AllocClientStatusComplete, "alloc is " + al.ClientStatus
	})
	allocs, _, err := c.Jobs().Allocations("later", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(readHostFile(t, filepath.Join(shared, "later"))); got != allocs[0].ID {
		t.Errorf("the volume holds %q, want the alloc's ID %s", got, allocs[0].ID)
	}
}
