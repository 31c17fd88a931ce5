package agent

import (
	"slices"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNomadClientCompat drives a dev agent with HashiCorp Nomad's own Go
// API client: what it sends must be accepted and what drover answers must
// decode into Nomad's types.
func TestNomadClientCompat(t *testing.T) {
	ta := startDevAgent(t)
	cfg := nomad.DefaultConfig()
	cfg.Address = ta.base
	cfg.HttpClient = ta.hc
	cfg.SecretID = ""
	cfg.Namespace = ""
	cfg.Region = ""
	c, err := nomad.NewClient(cfg)
	if err != nil {
		t.Fatalf("nomad.NewClient: %v", err)
	}
	defer c.Close()

	task := nomad.NewTask("t", "mock_driver").
		SetConfig("run_for", "10s").
		Require(&nomad.Resources{CPU: new(100), MemoryMB: new(32)})
	job := nomad.NewServiceJob("compat", "compat", "global", 50).
		AddDatacenter("dc1").
		AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))

	reg, wm, err := c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatalf("Jobs().Register: %v", err)
	}
	if reg.EvalID == "" || wm.LastIndex == 0 {
		t.Fatalf("register = %+v, write meta %+v", reg, wm)
	}

	var stubs []*nomad.AllocationListStub
	waitIndex(t, "the alloc to run", func(index uint64) (uint64, bool) {
		var qm *nomad.QueryMeta
		stubs, qm, err = c.Jobs().Allocations("compat", false, &nomad.QueryOptions{WaitIndex: index, WaitTime: 30 * time.Second})
		if err != nil {
			t.Fatalf("Jobs().Allocations: %v", err)
		}
		if qm.LastIndex == 0 {
			t.Fatalf("Jobs().Allocations: no index in %+v", qm)
		}
		return qm.LastIndex, len(stubs) == 1 && stubs[0].ClientStatus == nomad.AllocClientStatusRunning
	})

	alloc, _, err := c.Allocations().Info(stubs[0].ID, nil)
	if err != nil {
		t.Fatalf("Allocations().Info: %v", err)
	}
	if alloc.JobID != "compat" || alloc.Job == nil || *alloc.Job.ID != "compat" {
		t.Fatalf("alloc = %+v", alloc)
	}
	state := alloc.TaskStates["t"]
	if state == nil || state.State != "running" || state.StartedAt.IsZero() {
		t.Fatalf("task state = %+v", state)
	}
	var types []string
	for _, e := range state.Events {
		types = append(types, e.Type)
		if e.Time == 0 {
			t.Errorf("event %q has no time", e.Type)
		}
	}
	for _, want := range []string{nomad.TaskReceived, nomad.TaskSetup, nomad.TaskStarted} {
		if !slices.Contains(types, want) {
			t.Errorf("task events %q lack %q", types, want)
		}
	}

	// Reads the Nomad CLI makes.
	info, _, err := c.Jobs().Info("compat", nil)
	if err != nil || *info.ID != "compat" || *info.TaskGroups[0].Count != 1 {
		t.Fatalf("Jobs().Info = %+v, %v", info, err)
	}
	if list, _, err := c.Jobs().List(nil); err != nil || len(list) != 1 {
		t.Fatalf("Jobs().List = %+v, %v", list, err)
	}
	if ev, _, err := c.Evaluations().Info(reg.EvalID, nil); err != nil || ev.JobID != "compat" {
		t.Fatalf("Evaluations().Info = %+v, %v", ev, err)
	}
	if sum, _, err := c.Jobs().Summary("compat", nil); err != nil || sum.Summary["g"].Running != 1 {
		t.Fatalf("Jobs().Summary = %+v, %v", sum, err)
	}
	// As Nomad's, a service job's first version is deployed.
	if d, _, err := c.Jobs().LatestDeployment("compat", nil); err != nil || d == nil || d.JobID != "compat" || d.JobVersion != 0 {
		t.Fatalf("Jobs().LatestDeployment = %+v, %v; want the first version's", d, err)
	}
	if vs, _, _, err := c.Jobs().Versions("compat", false, nil); err != nil || len(vs) != 1 {
		t.Fatalf("Jobs().Versions = %+v, %v", vs, err)
	}
	if rs, err := c.Regions().List(); err != nil || len(rs) != 1 || rs[0] != "global" {
		t.Fatalf("Regions().List = %q, %v", rs, err)
	}
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 || nodes[0].ID != ta.agent.NodeID() {
		t.Fatalf("Nodes().List = %+v, %v", nodes, err)
	}
	if n, _, err := c.Nodes().Info(nodes[0].ID, nil); err != nil || n.Name != "test-node" {
		t.Fatalf("Nodes().Info = %+v, %v", n, err)
	}
	if leader, err := c.Status().Leader(); err != nil || leader == "" {
		t.Fatalf("Status().Leader = %q, %v", leader, err)
	}
	if self, err := c.Agent().Self(); err != nil || self.Stats["client"]["node_id"] != ta.agent.NodeID() {
		t.Fatalf("Agent().Self = %+v, %v", self, err)
	}
	if _, err := c.Jobs().ParseHCLOpts(&nomad.JobsParseRequest{JobHCL: "job \"x\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock_driver\"\n    }\n  }\n}\n"}); err != nil {
		t.Fatalf("Jobs().ParseHCLOpts: %v", err)
	}

	// Blocking query through Nomad's client.
	_, qm, err := c.Jobs().Info("compat", nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, qm2, err := c.Jobs().Info("compat", &nomad.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 200 * time.Millisecond})
	if err != nil || qm2.LastIndex != qm.LastIndex || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("blocking Jobs().Info: %+v after %s, %v", qm2, time.Since(start), err)
	}

	evalID, _, err := c.Jobs().Deregister("compat", true, nil)
	if err != nil || evalID == "" {
		t.Fatalf("Jobs().Deregister(purge) = %q, %v", evalID, err)
	}
	if _, _, err := c.Jobs().Info("compat", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("Jobs().Info after purge: %v, want a 404", err)
	}
}
