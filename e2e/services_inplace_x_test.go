package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// TestServicesInPlaceUpdateJoinsDeployment: a change of a service block
// only updates the allocations in place (same allocation, same task
// process) under the job's deployment: a tag change re-registers the
// service and the deployment succeeds once each updated allocation is
// healthy again; a check that fails after the next in-place update fails
// that deployment and holds the second allocation back at the previous
// version, still running the same process.
func TestServicesInPlaceUpdateJoinsDeployment(t *testing.T) {
	t.Parallel() // its own agent and job; nothing machine-wide
	bb := requireBusybox(t)
	a := startAgent(t)
	c := a.client(t)
	const id = "inplace"
	job := func(tag, path string) string {
		hcl := nomadServiceJob(id, bb, path, "")
		hcl = strings.Replace(hcl, `healthy_deadline = "2m"`, "healthy_deadline = \"15s\"\n    max_parallel     = 1", 1)
		hcl = strings.Replace(hcl, "group \"g\" {\n", "group \"g\" {\n    count = 2\n", 1)
		hcl = strings.Replace(hcl, `tags     = ["e2e", `, fmt.Sprintf(`tags     = [%q, `, tag), 1)
		// The task's shell execs the web server: its pid is the task's.
		return strings.Replace(hcl, `args    = ["-c", "echo`, `args    = ["-c", "echo $$ > \"$NOMAD_TASK_DIR/pid\"; echo`, 1)
	}
	deployed := func(version uint64, status string) *api.Deployment {
		t.Helper()
		var dep *api.Deployment
		waitFor(t, portsRunTimeout, fmt.Sprintf("version %d's deployment to be %s", version, status), func() (bool, string) {
			d, _, err := c.Jobs().LatestDeployment(id, nil)
			if err != nil || d == nil {
				return false, fmt.Sprintf("%v %v", d, err)
			}
			dep = d
			return d.JobVersion == version && d.Status == status, fmt.Sprintf("version %d %s: %s", d.JobVersion, d.Status, d.StatusDescription)
		})
		return dep
	}
	// pids returns the running allocations' task pids and job versions, by
	// allocation ID.
	type runState struct {
		pid     string
		version uint64
	}
	running := func() map[string]runState {
		t.Helper()
		allocs, _, err := c.Jobs().Allocations(id, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]runState{}
		for _, stub := range allocs {
			if stub.ClientStatus != api.AllocClientStatusRunning {
				continue
			}
			al, _, err := c.Allocations().Info(stub.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			out[al.ID] = runState{pid: strings.TrimSpace(taskFile(t, c, al, "pid")), version: *al.Job.Version}
		}
		return out
	}
	tagsOf := func() []string {
		regs, _, err := c.Services().Get(id+"-web", nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range regs {
			out = append(out, r.Tags[0])
		}
		slices.Sort(out)
		return out
	}

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "v0.nomad.hcl", job("v0", "/index.html"))); r.code != 0 {
		t.Fatalf("job run v0:\n%s", r)
	}
	deployed(0, api.DeploymentStatusSuccessful)
	before := running()
	if len(before) != 2 {
		t.Fatalf("running after version 0: %+v, want 2 allocations", before)
	}

	// A tag change: in place, rolled one at a time on the checks.
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "v1.nomad.hcl", job("v1", "/index.html"))); r.code != 0 {
		t.Fatalf("job run v1:\n%s", r)
	}
	d := deployed(1, api.DeploymentStatusSuccessful)
	if g := d.TaskGroups["g"]; g == nil || g.PlacedAllocs != 2 || g.HealthyAllocs != 2 {
		t.Errorf("version 1's deployment counted %+v, want both allocations placed and healthy", g)
	}
	after := running()
	for allocID, st := range before {
		if got, ok := after[allocID]; !ok || got.pid != st.pid || got.version != 1 {
			t.Errorf("allocation %s after the tag change: %+v (running %t), want version 1 with its pid %s", allocID, got, ok, st.pid)
		}
	}
	waitFor(t, portsRunTimeout, "the new tags to be registered", func() (bool, string) {
		got := tagsOf()
		return slices.Equal(got, []string{"v1", "v1"}), fmt.Sprint(got)
	})

	// A new tag and a check that fails: the first allocation is updated in
	// place and never turns healthy, the deployment fails, and the second
	// keeps version 1.
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "v2.nomad.hcl", job("v2", "/missing"))); r.code != 0 {
		t.Fatalf("job run v2:\n%s", r)
	}
	d = deployed(2, api.DeploymentStatusFailed)
	if g := d.TaskGroups["g"]; g == nil || g.PlacedAllocs != 1 || g.UnhealthyAllocs != 1 {
		t.Errorf("version 2's deployment counted %+v, want one allocation placed and unhealthy", g)
	}
	last := running()
	versions := map[uint64]int{}
	for allocID, st := range before {
		got, ok := last[allocID]
		if !ok || got.pid != st.pid {
			t.Errorf("allocation %s after the failing check: %+v (running %t), want it running its pid %s", allocID, got, ok, st.pid)
		}
		versions[got.version]++
	}
	if versions[1] != 1 || versions[2] != 1 {
		t.Errorf("job versions of the allocations %v, want one held back at version 1 and one at 2", versions)
	}
	if got := tagsOf(); !slices.Equal(got, []string{"v1", "v2"}) {
		t.Errorf("registered tags %v, want v1 (held back) and v2", got)
	}
}
