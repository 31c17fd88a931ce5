package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// mockServiceJob is a service job of count tasks of the mock driver that
// run until stopped, each reserving memMB of memory.
func mockServiceJob(id string, priority, count int, memMB int64) *api.Job {
	return &api.Job{
		ID: api.String(id), Type: api.String("service"), Priority: api.Int(priority),
		TaskGroups: []*api.TaskGroup{{
			Name: api.String("g"), Count: api.Int(count),
			Tasks: []*api.Task{{
				Name: "t", Driver: "mock_driver",
				Config:    map[string]any{"run_for": "1h"},
				Resources: &api.Resources{CPU: api.Int(20), MemoryMB: api.Int(int(memMB))},
			}},
		}},
	}
}

// nodeMemory returns the memory (MB) the only node offers to allocations.
func nodeMemory(t *testing.T, c *api.Client) int64 {
	t.Helper()
	var nodes []*api.NodeListStub
	waitFor(t, 30*time.Second, "a ready node", func() (bool, string) {
		var err error
		nodes, _, err = c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		return len(nodes) == 1 && nodes[0].Status == "ready", fmt.Sprintf("%d nodes", len(nodes))
	})
	n, _, err := c.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := n.NodeResources.Memory.MemoryMB
	if n.ReservedResources != nil {
		mem -= int64(n.ReservedResources.Memory.MemoryMB)
	}
	if mem < 100 {
		t.Fatalf("node offers %d MB", mem)
	}
	return mem
}

// jobAllocs returns a job's allocations in full.
func jobAllocs(t *testing.T, c *api.Client, jobID string) []*api.Allocation {
	t.Helper()
	stubs, _, err := c.Jobs().Allocations(jobID, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*api.Allocation
	for _, s := range stubs {
		a, _, err := c.Allocations().Info(s.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// httpJSON sends a request with a JSON body (nil: none) and decodes the
// JSON answer into out.
func httpJSON(t *testing.T, method, url string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
	}
}

// eventSpan returns the earliest and latest task event times of an
// allocation (Unix nanoseconds; 0 when it has none), leaving out the
// events of the given types from first.
func eventSpan(a *api.Allocation, skipFirst ...string) (first, last int64) {
	for _, ts := range a.TaskStates {
		for _, e := range ts.Events {
			if (first == 0 || e.Time < first) && !slices.Contains(skipFirst, e.Type) {
				first = e.Time
			}
			last = max(last, e.Time)
		}
	}
	return first, last
}

// TestPreemption fills the node with a low-priority job, enables service
// preemption through the scheduler configuration API, and runs a
// high-priority job that only fits by preempting: the preempted
// allocations say who preempted them, the new one lists them, and the new
// one starts only after they have terminated.
func TestPreemption(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	mem := nodeMemory(t, c)

	// The low job takes 90% of the node's memory in two allocations.
	if _, _, err := c.Jobs().Register(mockServiceJob("low", 20, 2, mem*45/100), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "low allocations running", func() (bool, string) {
		allocs := jobAllocs(t, c, "low")
		running := 0
		for _, al := range allocs {
			if al.ClientStatus == "running" {
				running++
			}
		}
		return running == 2, fmt.Sprintf("%d of %d running", running, len(allocs))
	})

	// Service preemption is off by default (Nomad's default).
	var cfg struct {
		SchedulerConfig *api.SchedulerConfiguration
		Index           uint64
	}
	httpJSON(t, "GET", a.addr+"/v1/operator/scheduler/configuration", nil, &cfg)
	if cfg.SchedulerConfig == nil || cfg.SchedulerConfig.PreemptionConfig.ServiceSchedulerEnabled || !cfg.SchedulerConfig.PreemptionConfig.SystemSchedulerEnabled {
		t.Fatalf("default scheduler configuration: %+v", cfg.SchedulerConfig)
	}
	set := *cfg.SchedulerConfig
	set.PreemptionConfig.ServiceSchedulerEnabled = true
	var setResp struct {
		Updated bool
		Index   uint64
	}
	httpJSON(t, "PUT", a.addr+"/v1/operator/scheduler/configuration", &set, &setResp)
	if !setResp.Updated || setResp.Index == 0 {
		t.Fatalf("set configuration: %+v", setResp)
	}
	if r := a.cli(t, "operator", "scheduler", "get-config"); r.code != 0 || !strings.Contains(r.stdout, "Preemption Service Scheduler  = true") {
		t.Fatalf("get-config:\n%s", r)
	}

	// The high job needs 30%: it fits only if a low allocation goes.
	if _, _, err := c.Jobs().Register(mockServiceJob("high", 80, 1, mem*30/100), nil); err != nil {
		t.Fatal(err)
	}
	var high *api.Allocation
	waitFor(t, time.Minute, "the high allocation running", func() (bool, string) {
		allocs := jobAllocs(t, c, "high")
		if len(allocs) != 1 {
			return false, fmt.Sprintf("%d allocs", len(allocs))
		}
		high = allocs[0]
		return high.ClientStatus == "running", "client status " + high.ClientStatus
	})
	if len(high.PreemptedAllocations) != 1 {
		t.Fatalf("high alloc preempted %v, want one allocation", high.PreemptedAllocations)
	}
	var preempted []*api.Allocation
	waitFor(t, time.Minute, "the preempted allocation terminal", func() (bool, string) {
		preempted = preempted[:0]
		for _, al := range jobAllocs(t, c, "low") {
			if al.PreemptedByAllocation != "" {
				preempted = append(preempted, al)
			}
		}
		if len(preempted) != 1 {
			return false, fmt.Sprintf("%d preempted", len(preempted))
		}
		p := preempted[0]
		return p.ClientStatus == "complete" || p.ClientStatus == "failed", "client status " + p.ClientStatus
	})
	p := preempted[0]
	if p.PreemptedByAllocation != high.ID || !slices.Contains(high.PreemptedAllocations, p.ID) {
		t.Fatalf("preempted %s by %q; high %s preempted %v", p.ID, p.PreemptedByAllocation, high.ID, high.PreemptedAllocations)
	}
	if p.DesiredStatus != "evict" || p.DesiredDescription != "Preempted by alloc "+high.ID {
		t.Fatalf("preempted alloc: desired %q (%q)", p.DesiredStatus, p.DesiredDescription)
	}
	// The other low allocation keeps running.
	for _, al := range jobAllocs(t, c, "low") {
		if al.ID != p.ID && al.DesiredStatus == "run" && al.ClientStatus != "running" {
			t.Errorf("untouched low alloc %s is %s", al.ID, al.ClientStatus)
		}
	}

	// The new allocation's tasks did nothing before the preempted one's
	// last event: the client waited for it to terminate. ("Received" is
	// recorded when the client receives the allocation, before it waits,
	// as in Nomad; every later event - Task Setup, Started - must follow.)
	_, lastPreempted := eventSpan(p)
	firstHigh, _ := eventSpan(high, "Received")
	if lastPreempted == 0 || firstHigh == 0 {
		t.Fatalf("missing task events: preempted last %d, high first %d", lastPreempted, firstHigh)
	}
	if firstHigh <= lastPreempted {
		for _, al := range []*api.Allocation{p, high} {
			for name, ts := range al.TaskStates {
				for _, e := range ts.Events {
					t.Logf("%s %s %s %s", al.JobID, name, time.Unix(0, e.Time).Format(time.RFC3339Nano), e.Type)
				}
			}
		}
		t.Errorf("high alloc's first event after Received at %s is not after the preempted alloc's last at %s (the client must wait for preempted allocations)",
			time.Unix(0, firstHigh).Format(time.RFC3339Nano), time.Unix(0, lastPreempted).Format(time.RFC3339Nano))
	}

	// The status of the preempted allocation says why.
	if r := a.cli(t, "alloc", "status", p.ID); r.code != 0 || !strings.Contains(r.stdout, "Preempted by alloc") {
		t.Errorf("alloc status of the preempted alloc does not say why:\n%s", r)
	}
}
