package agent

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/structs"
)

// pinnedJobBody is a mock_driver batch job of one alloc, pinned to the
// node named node, whose task writes out to stdout and exits.
func pinnedJobBody(id, node, out string) string {
	return fmt.Sprintf(`{"Job": {"ID": %q, "Type": "batch",
		"Constraints": [{"LTarget": "${node.unique.name}", "RTarget": %q, "Operand": "="}],
		"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "mock_driver",
		"Config": {"run_for": "100ms", "stdout_string": %q}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`, id, node, out)
}

// TestClientOnlyAgentForwards runs a server+client agent A and a
// client-only agent B that reaches A over the RPC port. Through B's HTTP
// API (forwarded to A's server over RPC) jobs are registered, listed,
// read, planned, and watched with a blocking query; client requests for
// an allocation are proxied to the agent of the node that runs it, both
// ways; Nomad's Go client works against B; and once B is gone, A names
// B's node as unreachable.
func TestClientOnlyAgentForwards(t *testing.T) {
	a := startAgent(t, persistentConfig(t.TempDir(), true, true))
	b := startAgent(t, persistentConfig(t.TempDir(), false, true, a.agent.RPCAddr()))
	nameA, nameB := a.agent.cfg.NodeName, b.agent.cfg.NodeName
	if nameA == nameB {
		t.Fatalf("both nodes are named %s", nameA)
	}

	// Nodes, through B.
	var nodes []*structs.NodeListStub
	b.watch("two ready nodes, listed by B", "/v1/nodes", &nodes, func() bool {
		ready := 0
		for _, n := range nodes {
			if n.Status == structs.NodeStatusReady {
				ready++
			}
		}
		return ready == 2
	})
	var leader string
	b.must("GET", "/v1/status/leader", "", &leader)
	if leader != a.agent.RPCAddr() {
		t.Errorf("B's leader = %q, want %q", leader, a.agent.RPCAddr())
	}

	// Jobs, through B.
	var reg structs.JobRegisterResponse
	regIndex := b.must("PUT", "/v1/jobs", pinnedJobBody("on-b", nameB, "hello from b\n"), &reg)
	if reg.EvalID == "" || regIndex == 0 {
		t.Fatalf("register through B = %+v, index %d", reg, regIndex)
	}
	b.must("PUT", "/v1/jobs", pinnedJobBody("on-a", nameA, "hello from a\n"), nil)
	var job structs.Job
	b.must("GET", "/v1/job/on-b", "", &job)
	if job.ID != "on-b" || len(job.TaskGroups) != 1 {
		t.Fatalf("job through B = %+v", job)
	}
	if code, _, body := b.do("GET", "/v1/job/nope", ""); code != http.StatusNotFound || !strings.Contains(string(body), "not found") {
		t.Errorf("unknown job through B = %d %s, want a 404", code, body)
	}
	var plan struct{ Diff *structs.JobDiff }
	b.must("PUT", "/v1/job/on-b/plan", strings.Replace(pinnedJobBody("on-b", nameB, "changed\n"), `{"Job"`, `{"Diff": true, "Job"`, 1), &plan)
	if plan.Diff == nil || plan.Diff.Type != "Edited" {
		t.Errorf("plan through B: diff %+v, want an edit", plan.Diff)
	}
	b.must("GET", "/v1/operator/scheduler/configuration", "", nil)
	b.must("GET", "/v1/deployments", "", nil)
	if code, _, body := b.do("PUT", "/v1/deployment/fail/nope", ""); code != http.StatusNotFound || !strings.Contains(string(body), "not found") {
		t.Errorf("fail unknown deployment through B = %d %s, want a 404", code, body)
	}
	b.must("GET", "/v1/job/on-b/versions", "", nil)

	// The same read through A and B has the same index. The jobs' status
	// changes while their allocations run: compare B's read with two
	// equal reads of A around it.
	var listB []*structs.JobListStub
	for try := 0; ; try++ {
		idxA := a.must("GET", "/v1/jobs", "", nil)
		idxB := b.must("GET", "/v1/jobs", "", &listB)
		if again := a.must("GET", "/v1/jobs", "", nil); again != idxA {
			if try == 100 {
				t.Fatalf("GET /v1/jobs: the index never stayed put across three reads (last %d, %d)", idxA, again)
			}
			continue
		}
		if idxA != idxB || len(listB) != 2 {
			t.Errorf("GET /v1/jobs: A index %d, B index %d and %d jobs", idxA, idxB, len(listB))
		}
		break
	}
	idxB := b.must("GET", "/v1/jobs", "", nil)

	// A blocking query through B returns when the index changes; repeated
	// with each new index (the jobs' status changes too), it returns the
	// job registered later.
	type result struct {
		code  int
		index uint64
		body  string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		index := idxB
		for {
			resp, err := b.hc.Get(b.base + "/v1/jobs?index=" + strconv.FormatUint(index, 10) + "&wait=30s")
			if err != nil {
				done <- result{err: err}
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			idx, _ := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
			r := result{code: resp.StatusCode, index: idx, body: string(body)}
			if r.code != http.StatusOK || r.index <= index || strings.Contains(r.body, `"later"`) {
				done <- r
				return
			}
			index = r.index
		}
	}()
	a.must("PUT", "/v1/jobs", pinnedJobBody("later", nameA, "later\n"), nil)
	select {
	case r := <-done:
		if r.err != nil || r.code != http.StatusOK || r.index <= idxB || !strings.Contains(r.body, `"later"`) {
			t.Errorf("blocking query through B = %d index %d (after %d) %v: %.200s", r.code, r.index, idxB, r.err, r.body)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("blocking queries through B did not return the job registered later")
	}

	onB := waitAllocsComplete(b, "on-b", 1)[0]
	onA := waitAllocsComplete(b, "on-a", 1)[0]
	if onB.NodeID != b.agent.NodeID() || onA.NodeID != a.agent.NodeID() {
		t.Fatalf("on-b runs on %s (B is %s), on-a on %s (A is %s)", onB.NodeID, b.agent.NodeID(), onA.NodeID, a.agent.NodeID())
	}

	// Client requests go to the agent of the alloc's node, both ways.
	for _, c := range []struct {
		via   *testAgent
		alloc string
		want  string
	}{
		{a, onB.ID, "hello from b\n"},
		{b, onA.ID, "hello from a\n"},
		{a, onA.ID, "hello from a\n"},
	} {
		code, _, body := c.via.do("GET", "/v1/client/fs/logs/"+c.alloc+"?task=t&type=stdout&plain=true&origin=start", "")
		if code != http.StatusOK || string(body) != c.want {
			t.Errorf("logs of %s via %s = %d %q, want %q", c.alloc, c.via.base, code, body, c.want)
		}
		var files []map[string]any
		c.via.must("GET", "/v1/client/fs/ls/"+c.alloc[:8]+"?path=t", "", &files)
		if !hasFile(files, "local") {
			t.Errorf("fs ls of %s via %s = %v, want the task's local dir", c.alloc, c.via.base, files)
		}
	}

	// Nomad's Go client against the client-only agent.
	cfg := nomad.DefaultConfig()
	cfg.Address = b.base
	cfg.HttpClient = b.hc
	cfg.SecretID, cfg.Namespace, cfg.Region = "", "", ""
	nc, err := nomad.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	task := nomad.NewTask("t", "mock_driver").SetConfig("run_for", "100ms").
		Require(&nomad.Resources{CPU: new(100), MemoryMB: new(32)})
	njob := nomad.NewBatchJob("nomad-api", "nomad-api", "global", 50).AddDatacenter("dc1").
		AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	nreg, wm, err := nc.Jobs().Register(njob, nil)
	if err != nil || nreg.EvalID == "" || wm.LastIndex == 0 {
		t.Fatalf("Jobs().Register through B = %+v, %+v, %v", nreg, wm, err)
	}
	info, qm, err := nc.Jobs().Info("nomad-api", nil)
	if err != nil || *info.ID != "nomad-api" || qm.LastIndex == 0 {
		t.Fatalf("Jobs().Info through B = %+v, %+v, %v", info, qm, err)
	}
	stubs, _, err := nc.Jobs().List(nil)
	if err != nil || len(stubs) != 4 {
		t.Fatalf("Jobs().List through B = %d jobs, %v", len(stubs), err)
	}
	waitAllocsComplete(b, "nomad-api", 1)

	// Without B, A names B's node as unreachable.
	b.stop()
	code, _, body := a.do("GET", "/v1/client/fs/ls/"+onB.ID, "")
	if code != http.StatusBadGateway || !strings.Contains(string(body), onB.NodeID[:8]) || !strings.Contains(string(body), "unreachable") {
		t.Errorf("fs ls of an alloc on a stopped agent = %d %s, want a 502 naming node %s", code, body, onB.NodeID[:8])
	}
	a.stop()
}

// hasFile reports whether an fs ls answer lists name.
func hasFile(files []map[string]any, name string) bool {
	for _, f := range files {
		if f["Name"] == name {
			return true
		}
	}
	return false
}

// TestClientOnlyAgentWithoutServer: when no server answers, a forwarded
// request is a 503 that says why.
func TestClientOnlyAgentWithoutServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	b := startAgent(t, persistentConfig(t.TempDir(), false, true, dead))
	code, _, body := b.do("GET", "/v1/jobs", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), dead) {
		t.Errorf("GET /v1/jobs without a server = %d %s, want a 503 naming %s", code, body, dead)
	}
	var peers []string
	b.must("GET", "/v1/status/peers", "", &peers)
	if len(peers) != 1 || peers[0] != dead {
		t.Errorf("peers = %v, want [%s]", peers, dead)
	}
	b.stop()
}
