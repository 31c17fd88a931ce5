package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// TestTemplatesRestartsRollWithMaxParallel: a variable that the three
// allocations of a group with update { max_parallel = 1 } read changes;
// their tasks restart one at a time (each restart begins after the
// previous task runs again and stayed up min_healthy_time), not all at
// once, and an allocation waiting for its turn says so in an event.
func TestTemplatesRestartsRollWithMaxParallel(t *testing.T) {
	t.Parallel() // its own agent, job and variable; nothing machine-wide
	a := startAgent(t)
	c := a.client(t)
	const id = "rolltmpl"
	const minHealthy = 2 * time.Second
	hcl := strings.Replace(templateJob(id, "restart"), "group \"g\" {\n",
		"group \"g\" {\n    count = 3\n    update {\n      max_parallel     = 1\n      min_healthy_time = \"2s\"\n    }\n", 1)
	if r := a.cli(t, "var", "put", "nomad/jobs/"+id, "password=one"); r.code != 0 {
		t.Fatalf("var put: %s", r)
	}
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "roll.nomad.hcl", hcl)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	states := func() map[string]*api.TaskState {
		t.Helper()
		stubs, _, err := c.Jobs().Allocations(id, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*api.TaskState{}
		for _, s := range stubs {
			if s.ClientStatus != api.AllocClientStatusRunning {
				continue
			}
			al, _, err := c.Allocations().Info(s.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st := al.TaskStates["t"]; st != nil {
				out[al.ID] = st
			}
		}
		return out
	}
	allRunning := func(restarts uint64) func() (bool, string) {
		return func() (bool, string) {
			sts := states()
			n := 0
			for _, st := range sts {
				if st.State == "running" && st.Restarts == restarts {
					n++
				}
			}
			return n == 3, fmt.Sprintf("%d of %d allocations running with %d restarts", n, len(sts), restarts)
		}
	}
	waitFor(t, portsRunTimeout, "the three allocations to run", allRunning(0))

	if r := a.cli(t, "var", "put", "nomad/jobs/"+id, "password=two"); r.code != 0 {
		t.Fatalf("var put: %s", r)
	}
	waitFor(t, portsRunTimeout, "the three tasks to restart", allRunning(1))

	// Each restart: from its Restart Signaled event to the task's next
	// Started event.
	type span struct {
		alloc          string
		signaled, runs time.Time
	}
	var spans []span
	waited := 0
	for allocID, st := range states() {
		s := span{alloc: allocID[:8]}
		for _, e := range st.Events {
			switch {
			case e.Type == "Restart Signaled":
				s.signaled = time.Unix(0, e.Time)
			case e.Type == "Started" && !s.signaled.IsZero() && s.runs.IsZero():
				s.runs = time.Unix(0, e.Time)
			case e.Type == "Template" && strings.Contains(e.DisplayMessage, "restart waits for its turn"):
				waited++
			}
		}
		if s.signaled.IsZero() || s.runs.IsZero() {
			t.Fatalf("alloc %s: no restart in its events %+v", allocID, st.Events)
		}
		spans = append(spans, s)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].signaled.Before(spans[j].signaled) })
	for i := 1; i < len(spans); i++ {
		prev, next := spans[i-1], spans[i]
		if next.signaled.Before(prev.runs.Add(minHealthy)) {
			t.Errorf("alloc %s restarted at %s, before alloc %s ran again (%s) for min_healthy_time %s: restarts overlap",
				next.alloc, next.signaled.Format(time.StampMilli), prev.alloc, prev.runs.Format(time.StampMilli), minHealthy)
		}
	}
	if t.Failed() {
		for allocID, st := range states() {
			for _, e := range st.Events {
				t.Logf("%s %s %s %s", allocID[:8], time.Unix(0, e.Time).Format(time.StampMilli), e.Type, e.DisplayMessage)
			}
		}
	}
	if waited == 0 {
		t.Errorf("no allocation said it waits for its turn to restart")
	}
}
