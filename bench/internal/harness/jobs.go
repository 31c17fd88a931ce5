package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drover-io/drover/api"
)

// SleepJob is a service job of count allocs, each one raw_exec task "t"
// that writes its pid into $NOMAD_TASK_DIR/pid and execs /bin/sleep.
func SleepJob(id string, count int) string {
	script := strconv.Quote(`echo $$ > "$NOMAD_TASK_DIR/pid"; exec /bin/sleep 1000000`)
	return fmt.Sprintf(`job %q {
  type = "service"

  group "g" {
    count = %d

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "t" {
      driver = "raw_exec"

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
`, id, count, script)
}

// RunJob parses hcl through the agent and registers it.
func RunJob(c *api.Client, hcl string) error {
	job, err := c.Jobs().ParseHCL(hcl, true)
	if err != nil {
		return fmt.Errorf("parse job: %w", err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		return fmt.Errorf("register job: %w", err)
	}
	return nil
}

// AllRunning reports whether the job has n allocs, all running.
func AllRunning(c *api.Client, jobID string, n int) (bool, string) {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return false, err.Error()
	}
	running := 0
	for _, al := range allocs {
		if al.ClientStatus == api.AllocClientStatusRunning {
			running++
		}
	}
	return running == n && len(allocs) == n, fmt.Sprintf("%d of %d allocs running", running, len(allocs))
}

// DiskPids reads the pid each alloc's task "t" wrote from the data dir of
// the client running it (<dataDir>/alloc/<id>/t/local/pid); c lists the
// job's allocs. A client-only agent's file API needs a server, hence the
// disk.
func DiskPids(c *api.Client, dataDir, jobID string) (map[string]int, error) {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return nil, err
	}
	pids := map[string]int{}
	for _, stub := range allocs {
		b, err := os.ReadFile(filepath.Join(dataDir, "alloc", stub.ID, "t", "local", "pid"))
		if err != nil {
			return nil, fmt.Errorf("alloc %s: %w", stub.ID, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("alloc %s: pid file holds %q", stub.ID, b)
		}
		pids[stub.ID] = pid
	}
	return pids, nil
}

// TaskPids reads, through the file API, the pid each alloc's task "t"
// wrote; keys are alloc IDs.
func TaskPids(c *api.Client, jobID string) (map[string]int, error) {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return nil, err
	}
	pids := map[string]int{}
	for _, stub := range allocs {
		alloc, _, err := c.Allocations().Info(stub.ID, nil)
		if err != nil {
			return nil, err
		}
		rc, err := c.AllocFS().Cat(alloc, "t/local/pid", nil)
		if err != nil {
			return nil, fmt.Errorf("alloc %s: %w", stub.ID, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("alloc %s: pid file holds %q", stub.ID, b)
		}
		pids[stub.ID] = pid
	}
	return pids, nil
}

// Restarts sums the Restarts of every task of the job's allocs and counts
// their Started events.
func Restarts(c *api.Client, jobID string) (restarts, started int, err error) {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return 0, 0, err
	}
	for _, al := range allocs {
		for _, ts := range al.TaskStates {
			restarts += int(ts.Restarts)
			for _, e := range ts.Events {
				if e.Type == "Started" {
					started++
				}
			}
		}
	}
	return restarts, started, nil
}
