package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// dockerTestImage is the local image .ci/docker.sh builds.
const dockerTestImage = "drover-test/busybox:latest"

// execSurviveJob is a service job with one exec task "t" that runs marker
// (PID 1 of its namespace, so the host pid is found by the marker).
func execSurviveJob(id string, marker []string) string {
	return fmt.Sprintf(`job %q {
  type = "service"

  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "t" {
      driver       = "exec"
      kill_timeout = "5s"

      config {
        command = "/bin/sh"
        args    = ["-c", %s]
      }

      resources {
        cpu    = 10
        memory = 32
      }
    }
  }
}
`, id, strconv.Quote("echo started > /local/started; exec "+strings.Join(marker, " ")))
}

// dockerSurviveJob is a service job with one docker task "t" sleeping.
func dockerSurviveJob(id string) string {
	return fmt.Sprintf(`job %q {
  type = "service"

  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "t" {
      driver       = "docker"
      kill_timeout = "5s"

      config {
        image   = %q
        command = "sleep"
        args    = ["100000"]
      }

      resources {
        cpu    = 10
        memory = 32
      }
    }
  }
}
`, id, dockerTestImage)
}

// dockerReady says why docker tasks cannot run here, or "" when the
// daemon answers and has the test image.
func dockerReady() string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", dockerTestImage).CombinedOutput(); err != nil {
		return fmt.Sprintf("no Docker daemon with the image %s (run .ci/docker.sh): %v: %s", dockerTestImage, err, strings.TrimSpace(string(out)))
	}
	return ""
}

// containersOf returns the IDs of the running containers (all of them
// with all) the docker driver created for alloc id.
func containersOf(allocID string, all bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args := []string{"ps", "-q", "--no-trunc", "--filter", "label=io.drover.alloc_id=" + allocID}
	if all {
		args = append(args, "-a")
	}
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("docker ps: %v: %s", err, out)
	}
	return strings.Fields(string(out)), nil
}

// runningAllocOf waits until jobID has one alloc, running with task "t"
// running, and returns it.
func runningAllocOf(t *testing.T, c *api.Client, jobID string) *api.AllocationListStub {
	t.Helper()
	var alloc *api.AllocationListStub
	waitFor(t, surviveRunTimeout, "the alloc of "+jobID+" to run", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil {
			return false, err.Error()
		}
		if len(allocs) != 1 {
			return false, fmt.Sprintf("%d allocs", len(allocs))
		}
		alloc = allocs[0]
		ts := alloc.TaskStates["t"]
		if alloc.ClientStatus != api.AllocClientStatusRunning || ts == nil || ts.State != "running" {
			return false, "alloc is " + alloc.ClientStatus
		}
		return true, ""
	})
	return alloc
}

// execTaskPid waits for the one process running marker, checks that it is
// the child of a shim under dataDir, and returns its (host) pid.
func execTaskPid(t *testing.T, dataDir string, marker []string) int {
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
		if _, ok := tt.tasks[pid]; !ok {
			return false, fmt.Sprintf("marker pid %d is not a shim's child", pid)
		}
		return true, ""
	})
	return pid
}

// TestExecAndDockerSurviveAgentKill9 runs an exec task and a docker task
// under a persistent agent, SIGKILLs the agent (its process only), starts
// it again on the same data dir, and checks that it re-attached to the
// same exec process (through its shim) and the same container, with both
// allocs still running and not restarted. Stopping the jobs then leaves
// neither behind. Without a Docker daemon and the test image, the docker
// half is skipped (logged).
func TestExecAndDockerSurviveAgentKill9(t *testing.T) {
	t.Parallel()
	a := newPersistentAgent(t, "isolated", roleCombined)
	requireExecDriver(t)
	withDocker := true
	if why := dockerReady(); why != "" {
		withDocker = false
		t.Logf("skipping the docker half: %s", why)
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)

	marker := sleepMarker()
	runJob(t, a, "sx", execSurviveJob("sx", marker))
	if withDocker {
		runJob(t, a, "sd", dockerSurviveJob("sd"))
	}
	execAlloc := runningAllocOf(t, c, "sx")
	execPid := execTaskPid(t, a.dataDir, marker)
	if len(execCgroups(execAlloc.ID)) == 0 {
		t.Errorf("no cgroup drover/%s.t found for the exec task", execAlloc.ID)
	}
	var dockerAlloc *api.AllocationListStub
	var container string
	if withDocker {
		dockerAlloc = runningAllocOf(t, c, "sd")
		ids, err := containersOf(dockerAlloc.ID, false)
		if err != nil || len(ids) != 1 {
			t.Fatalf("containers of the docker alloc: %v, %v; want one", ids, err)
		}
		container = ids[0]
	}

	a.kill9(t)
	if !alive(execPid) {
		t.Fatalf("exec task pid %d died with the agent", execPid)
	}
	if withDocker {
		if ids, err := containersOf(dockerAlloc.ID, false); err != nil || len(ids) != 1 || ids[0] != container {
			t.Fatalf("container after the agent's death: %v, %v; want %s running", ids, err, container)
		}
	}

	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	want := 1
	if withDocker {
		want = 2
	}
	waitFor(t, surviveRunTimeout, fmt.Sprintf("the agent to re-attach to %d tasks", want), func() (bool, string) {
		a.checkAlive(t)
		got := strings.Count(a.sinceLastStart(), "re-attached to task")
		return got >= want, fmt.Sprintf("%d re-attached", got)
	})
	if got := runningAllocOf(t, c, "sx"); got.ID != execAlloc.ID {
		t.Errorf("exec alloc replaced: %s, was %s", got.ID, execAlloc.ID)
	}
	if got := execTaskPid(t, a.dataDir, marker); got != execPid {
		t.Errorf("exec task pid %d after the restart, was %d", got, execPid)
	}
	if withDocker {
		if got := runningAllocOf(t, c, "sd"); got.ID != dockerAlloc.ID {
			t.Errorf("docker alloc replaced: %s, was %s", got.ID, dockerAlloc.ID)
		}
		if ids, err := containersOf(dockerAlloc.ID, true); err != nil || len(ids) != 1 || ids[0] != container {
			t.Errorf("containers after the restart: %v, %v; want only %s", ids, err, container)
		}
	}
	jobs := []string{"sx"}
	if withDocker {
		jobs = append(jobs, "sd")
	}
	for _, job := range jobs {
		allocs, _, err := c.Jobs().Allocations(job, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, al := range allocs {
			ts, err := taskEvents(c, al.ID)
			if err != nil {
				t.Fatal(err)
			}
			if ts.State != "running" || ts.Restarts != 0 || countEvents(ts, "Started") != 1 {
				t.Errorf("job %s: task %s, %d restarts, %d Started events, want running, 0, 1:%s",
					job, ts.State, ts.Restarts, countEvents(ts, "Started"), eventsString(ts))
			}
		}
	}

	// Stopping the jobs leaves no shim, task process or container.
	stopJobAndCheckGone(t, a, c, "sx", a.dataDir, marker, []int{execPid})
	if left := execCgroups(execAlloc.ID); len(left) > 0 {
		t.Errorf("the exec task's cgroup is left after the stop: %v", left)
	}
	if withDocker {
		if r := a.cli(t, "job", "stop", "-detach", "sd"); r.code != 0 {
			t.Fatalf("job stop sd:\n%s", r)
		}
		waitFor(t, surviveRunTimeout, "the container to be gone and the docker alloc complete", func() (bool, string) {
			ids, err := containersOf(dockerAlloc.ID, false)
			if err != nil {
				return false, err.Error()
			}
			if len(ids) > 0 {
				return false, fmt.Sprintf("containers still running: %v", ids)
			}
			al, _, err := c.Allocations().Info(dockerAlloc.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			return al.ClientStatus == api.AllocClientStatusComplete, "alloc is " + al.ClientStatus
		})
	}
}

// execCgroups lists the exec driver's cgroups of alloc id
// ("drover/<alloc id>.<task>"), under cgroup v1 controllers or v2.
func execCgroups(allocID string) []string {
	var out []string
	for _, pattern := range []string{"/sys/fs/cgroup/*/drover/" + allocID + ".*", "/sys/fs/cgroup/drover/" + allocID + ".*"} {
		m, _ := filepath.Glob(pattern)
		out = append(out, m...)
	}
	return out
}

// requireExecDriver skips unless the exec driver can run here: root and
// cgroups (its fingerprint would say unhealthy otherwise).
func requireExecDriver(t *testing.T) {
	t.Helper()
	out, err := exec.Command("id", "-u").Output()
	if err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Skip("the exec driver needs root (namespaces, cgroups)")
	}
}
