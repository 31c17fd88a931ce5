package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/httpapi"
	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) {
	// raw_exec starts its shims as "<test binary> shim ...".
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	// exec probes its isolation as "<test binary> isolation-init probe".
	if code, ok := isolation.RunIfInit(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A -race binary sleeps a second at exit by default; each shim's
	// launcher is one that exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	// serf's Snapshotter.Wait (called by Serf.Shutdown) waits for its
	// stream goroutine but not for teeStream, which returns on its own
	// soon after; on a loaded machine it may still be there when the
	// check runs.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/hashicorp/serf/serf.(*Snapshotter).teeStream"))
}

// testAgent is a dev agent on a free port and an HTTP client for it.
type testAgent struct {
	t     *testing.T
	agent *Agent
	base  string
	hc    *http.Client
}

// startDevAgent starts a dev agent that the test's cleanup shuts down.
func startDevAgent(t *testing.T) *testAgent {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := NewAgent(&Config{DevMode: true, BindAddr: "127.0.0.1", HTTPPort: 0, NodeName: "test-node"}, logger)
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	if err := a.Start(); err != nil {
		_ = a.Shutdown()
		t.Fatalf("Start: %v", err)
	}
	ta := &testAgent{t: t, agent: a, base: "http://" + a.HTTPAddr(), hc: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(func() {
		ta.hc.CloseIdleConnections()
		if err := a.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return ta
}

// do sends a request and returns the status, headers and body.
func (ta *testAgent) do(method, path, body string) (int, http.Header, []byte) {
	ta.t.Helper()
	req, err := http.NewRequest(method, ta.base+path, strings.NewReader(body))
	if err != nil {
		ta.t.Fatal(err)
	}
	resp, err := ta.hc.Do(req)
	if err != nil {
		ta.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ta.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, b
}

// must sends a request that must succeed and decodes its body into out
// (when not nil); it returns the X-Nomad-Index.
func (ta *testAgent) must(method, path, body string, out any) uint64 {
	ta.t.Helper()
	code, h, b := ta.do(method, path, body)
	if code != http.StatusOK {
		ta.t.Fatalf("%s %s: status %d: %s", method, path, code, b)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		ta.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			ta.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	idx, _ := strconv.ParseUint(h.Get("X-Nomad-Index"), 10, 64)
	return idx
}

// eventBound bounds the waits for what real agents do (place, start,
// complete allocations): only an agent that is broken takes that long,
// while a loaded 2-core CI machine running the race detector is slow.
const eventBound = 2 * time.Minute

// watch GETs path as a blocking query until cond, which reads out, holds:
// each query after the first returns once the data's index passes the
// last one's (the agent wakes it on the change), so the test waits on the
// change itself, not on a timer. It fails the test after eventBound.
func (ta *testAgent) watch(what, path string, out any, cond func() bool) {
	ta.t.Helper()
	deadline := time.Now().Add(eventBound)
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var index uint64
	for {
		index = ta.must("GET", fmt.Sprintf("%s%sindex=%d&wait=30s", path, sep, index), "", out)
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			ta.t.Fatalf("timed out after %s waiting for %s", eventBound, what)
		}
	}
}

// waitIndex runs query as a blocking query until it reports ok: query
// is given the index to wait past (0 the first time) and returns the index
// of what it read. It fails the test after eventBound.
func waitIndex(t *testing.T, what string, query func(index uint64) (uint64, bool)) {
	t.Helper()
	deadline := time.Now().Add(eventBound)
	var index uint64
	for {
		next, ok := query(index)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", eventBound, what)
		}
		index = next
	}
}

// follow reads the stream path answers (a log followed) until it holds s,
// and fails the test after eventBound.
func (ta *testAgent) follow(what, path, s string) {
	ta.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventBound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", ta.base+path, nil)
	if err != nil {
		ta.t.Fatal(err)
	}
	resp, err := ta.hc.Do(req)
	if err != nil {
		ta.t.Fatalf("%s: GET %s: %v", what, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		ta.t.Fatalf("%s: GET %s: status %d: %s", what, path, resp.StatusCode, b)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(got), s) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil && !strings.Contains(string(got), s) {
			ta.t.Fatalf("%s: the stream ended (%v) with %q, without %q", what, err, got, s)
		}
	}
}

// waitFor polls cond, which observes the agents, until it holds; it fails
// the test after eventBound. It is for what has no blocking query (watch)
// or stream (follow) to wait on: what a client computes on its own
// schedule (check results, resource stats).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(eventBound)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", eventBound, what)
		}
		<-tick.C
	}
}

func mockJobBody(id string, meta string) string {
	return fmt.Sprintf(`{"Job": {"ID": %q, "Type": "service", "Meta": {"v": %q},
		"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "mock_driver",
		"Config": {"run_for": "10s"}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`, id, meta)
}

func TestAgentJobLifecycle(t *testing.T) {
	ta := startDevAgent(t)
	// The registration's evaluation places the allocation only if the
	// node is ready when it runs; before, it leaves a blocked evaluation,
	// which places it instead (the eval-allocations check below fails).
	var ready []*structs.NodeListStub
	ta.watch("the node ready", "/v1/nodes", &ready, func() bool {
		return len(ready) == 1 && ready[0].Status == structs.NodeStatusReady
	})

	var reg api.JobRegisterResponse
	regIndex := ta.must("PUT", "/v1/jobs", mockJobBody("web", "1"), &reg)
	if reg.EvalID == "" || regIndex == 0 || reg.Warnings != "" {
		t.Fatalf("register = %+v, index %d", reg, regIndex)
	}

	// The allocation runs.
	var allocs []*structs.AllocListStub
	ta.watch("the alloc to run", "/v1/job/web/allocations", &allocs, func() bool {
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	alloc := allocs[0]

	// Lists and lookups, by ID and by prefix.
	var jobs []*structs.JobListStub
	ta.must("GET", "/v1/jobs", "", &jobs)
	if len(jobs) != 1 || jobs[0].ID != "web" {
		t.Fatalf("jobs = %+v", jobs)
	}
	var job structs.Job
	ta.must("GET", "/v1/job/we", "", &job)
	if job.ID != "web" || job.Meta["v"] != "1" || job.TaskGroups[0].Tasks[0].KillTimeout != structs.DefaultKillTimeout {
		t.Fatalf("job by prefix = %+v", job)
	}
	var full structs.Allocation
	ta.must("GET", "/v1/allocation/"+alloc.ID[:8], "", &full)
	if full.ID != alloc.ID || full.TaskStates["t"] == nil || full.TaskStates["t"].State != structs.TaskStateRunning {
		t.Fatalf("alloc by prefix = %+v", full)
	}
	var eval structs.Evaluation
	ta.must("GET", "/v1/evaluation/"+reg.EvalID, "", &eval)
	if eval.JobID != "web" {
		t.Fatalf("eval = %+v", eval)
	}
	var evalAllocs []*structs.AllocListStub
	ta.must("GET", "/v1/evaluation/"+reg.EvalID[:6]+"/allocations", "", &evalAllocs)
	if len(evalAllocs) != 1 || evalAllocs[0].ID != alloc.ID {
		t.Fatalf("eval allocs = %+v", evalAllocs)
	}
	var evals []*structs.Evaluation
	ta.must("GET", "/v1/job/web/evaluations", "", &evals)
	if len(evals) == 0 {
		t.Fatal("job has no evaluations")
	}
	ta.must("GET", "/v1/evaluations", "", &evals)
	if len(evals) == 0 {
		t.Fatal("no evaluations listed")
	}
	var nodes []*structs.NodeListStub
	ta.must("GET", "/v1/nodes", "", &nodes)
	if len(nodes) != 1 || nodes[0].ID != ta.agent.NodeID() || nodes[0].Name != "test-node" {
		t.Fatalf("nodes = %+v, agent node %q", nodes, ta.agent.NodeID())
	}
	var node structs.Node
	ta.must("GET", "/v1/node/"+nodes[0].ID[:8], "", &node)
	if node.ID != nodes[0].ID {
		t.Fatalf("node by prefix = %+v", node)
	}
	var nodeAllocs []*structs.Allocation
	ta.must("GET", "/v1/node/"+node.ID+"/allocations", "", &nodeAllocs)
	if len(nodeAllocs) != 1 || nodeAllocs[0].ID != alloc.ID {
		t.Fatalf("node allocs = %+v", nodeAllocs)
	}
	var list []*structs.AllocListStub
	ta.must("GET", "/v1/allocations?prefix="+alloc.ID[:4], "", &list)
	if len(list) != 1 {
		t.Fatalf("allocations by prefix = %+v", list)
	}
	var summary structs.JobSummary
	ta.must("GET", "/v1/job/web/summary", "", &summary)
	if summary.Summary["g"].Running != 1 {
		t.Fatalf("summary = %+v", summary)
	}

	// A blocking query with nothing changing times out with the same index.
	jobIndex := ta.must("GET", "/v1/job/web", "", nil)
	start := time.Now()
	got := ta.must("GET", fmt.Sprintf("/v1/job/web?index=%d&wait=300ms", jobIndex), "", nil)
	if got != jobIndex || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("timed-out blocking query: index %d after %s, want %d after 300ms", got, time.Since(start), jobIndex)
	}

	// A blocking query returns when the job changes.
	var wg sync.WaitGroup
	var blockedIndex uint64
	var blockedJob structs.Job
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, h, b := ta.do("GET", fmt.Sprintf("/v1/job/web?index=%d&wait=20s", jobIndex), "")
		if code == http.StatusOK {
			blockedIndex, _ = strconv.ParseUint(h.Get("X-Nomad-Index"), 10, 64)
			_ = json.Unmarshal(b, &blockedJob)
		}
	}()
	start = time.Now()
	ta.must("PUT", "/v1/job/web", mockJobBody("web", "2"), nil)
	wg.Wait()
	if blockedIndex <= jobIndex || blockedJob.Meta["v"] != "2" || time.Since(start) > 10*time.Second {
		t.Fatalf("blocking query: index %d (was %d), meta %v after %s", blockedIndex, jobIndex, blockedJob.Meta, time.Since(start))
	}

	// Deregister stops the job; purge removes it.
	var dereg api.JobDeregisterResponse
	ta.must("DELETE", "/v1/job/web", "", &dereg)
	if dereg.EvalID == "" {
		t.Fatalf("deregister = %+v", dereg)
	}
	ta.must("GET", "/v1/job/web", "", &job)
	if !job.Stop {
		t.Fatal("job not stopped after deregister")
	}
	ta.watch("the allocs to stop", "/v1/job/web/allocations", &allocs, func() bool {
		for _, a := range allocs {
			if !(&structs.Allocation{ClientStatus: a.ClientStatus}).ClientTerminalStatus() {
				return false
			}
		}
		return true
	})
	ta.must("DELETE", "/v1/job/web?purge=true", "", nil)
	if code, _, b := ta.do("GET", "/v1/job/web", ""); code != http.StatusNotFound || !strings.Contains(string(b), `job "web" not found`) {
		t.Fatalf("GET purged job: %d %s", code, b)
	}
}

func TestAgentRejectsBadInput(t *testing.T) {
	ta := startDevAgent(t)
	ta.must("PUT", "/v1/jobs", mockJobBody("amb-1", "1"), nil)
	ta.must("PUT", "/v1/jobs", mockJobBody("amb-2", "1"), nil)
	var before []*structs.JobListStub
	ta.must("GET", "/v1/jobs", "", &before)

	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantBody                 string
	}{
		{"malformed JSON", "PUT", "/v1/jobs", `{"Job": {"ID": "x",`, 400, "request body"},
		{"unknown field", "PUT", "/v1/jobs", `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Cuont": 2}]}}`, 400, `unknown field Job.TaskGroups[0].Cuont`},
		{"negative count", "PUT", "/v1/jobs", strings.Replace(mockJobBody("x", "1"), `"Count": 1`, `"Count": -2`, 1), 400, "count -2 must not be negative"},
		{"missing driver", "PUT", "/v1/jobs", strings.Replace(mockJobBody("x", "1"), `"Driver": "mock_driver",`, "", 1), 400, "driver is missing"},
		{"unsupported feature", "PUT", "/v1/jobs", strings.Replace(mockJobBody("x", "1"), `"Type"`, `"Multiregion": {"Strategy": {"MaxParallel": 1}}, "Type"`, 1), 400, "Multiregion (multiregion block) is not supported by drover yet"},
		{"task name traverses", "PUT", "/v1/jobs", strings.Replace(mockJobBody("x", "1"), `"Name": "t"`, `"Name": "../../../x"`, 1), 400, `group "g": task name "../../../x" contains "/"`},
		{"group name traverses", "PUT", "/v1/jobs", strings.Replace(mockJobBody("x", "1"), `"Name": "g"`, `"Name": "a/.."`, 1), 400, `group name "a/.." contains "/"`},
		{"job ID with NUL", "PUT", "/v1/jobs", strings.Replace(mockJobBody("x-nul", "1"), `"x-nul"`, `"x\u0000"`, 1), 400, `job ID "x\x00"`},
		{"unknown job", "GET", "/v1/job/nope", "", 404, `job "nope" not found`},
		{"unknown alloc", "GET", "/v1/allocation/00000000-dead", "", 404, "not found"},
		{"unknown eval", "GET", "/v1/evaluation/00000000-dead", "", 404, "not found"},
		{"unknown node", "GET", "/v1/node/00000000-dead", "", 404, "not found"},
		{"ambiguous job prefix", "GET", "/v1/job/amb", "", 400, `job prefix "amb" matches 2 jobs (amb-1, amb-2)`},
		{"wrong method", "PATCH", "/v1/job/amb-1", "", 405, "method PATCH is not allowed"},
		{"unknown route", "GET", "/v1/frobnicate", "", 404, "no such endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, h, b := ta.do(tc.method, tc.path, tc.body)
			if code != tc.wantCode || !strings.Contains(string(b), tc.wantBody) {
				t.Errorf("%s %s = %d %q, want %d containing %q", tc.method, tc.path, code, b, tc.wantCode, tc.wantBody)
			}
			if !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
				t.Errorf("Content-Type = %q, want text/plain", h.Get("Content-Type"))
			}
		})
	}

	// Allocations running move the index; the jobs themselves must not move.
	var after []*structs.JobListStub
	ta.must("GET", "/v1/jobs", "", &after)
	if jobVersions(after) != jobVersions(before) {
		t.Errorf("rejected requests changed the jobs: %s, was %s", jobVersions(after), jobVersions(before))
	}
}

// jobVersions renders each job's ID, modify index and stop flag.
func jobVersions(jobs []*structs.JobListStub) string {
	var b strings.Builder
	for _, j := range jobs {
		fmt.Fprintf(&b, "%s@%d stop=%v;", j.ID, j.JobModifyIndex, j.Stop)
	}
	return b.String()
}

// TestAgentAmbiguousAllocPrefix places 17 allocations: two of them share
// their first hex digit, so that digit is an ambiguous prefix.
func TestAgentAmbiguousAllocPrefix(t *testing.T) {
	ta := startDevAgent(t)
	body := strings.NewReplacer(`"Count": 1`, `"Count": 17`, `"CPU": 100, "MemoryMB": 32`, `"CPU": 10, "MemoryMB": 10`).Replace(mockJobBody("many", "1"))
	ta.must("PUT", "/v1/jobs", body, nil)
	var allocs []*structs.AllocListStub
	ta.watch("17 allocs", "/v1/job/many/allocations", &allocs, func() bool {
		return len(allocs) == 17
	})
	seen := map[byte]bool{}
	var prefix string
	for _, a := range allocs {
		if seen[a.ID[0]] {
			prefix = a.ID[:1]
			break
		}
		seen[a.ID[0]] = true
	}
	code, _, b := ta.do("GET", "/v1/allocation/"+prefix, "")
	if code != http.StatusBadRequest || !strings.Contains(string(b), "matched multiple") {
		t.Fatalf("GET /v1/allocation/%s = %d %q, want 400 naming the matches", prefix, code, b)
	}
}

func TestAgentJobsParse(t *testing.T) {
	ta := startDevAgent(t)
	good := `{"JobHCL": "job \"p\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock_driver\"\n    }\n  }\n}\n"}`
	var job api.Job
	ta.must("POST", "/v1/jobs/parse", good, &job)
	if job.ID == nil || *job.ID != "p" || len(job.TaskGroups) != 1 {
		t.Fatalf("parsed job = %+v", job)
	}
	bad := `{"JobHCL": "job \"p\" {\n  group \"g\" {\n    tsak \"t\" {}\n  }\n}\n"}`
	code, _, b := ta.do("POST", "/v1/jobs/parse", bad)
	if code != http.StatusBadRequest || !strings.Contains(string(b), ":3:") {
		t.Fatalf("parse error = %d %q, want 400 with a line:col position", code, b)
	}
}

func TestAgentStatusAndSelf(t *testing.T) {
	ta := startDevAgent(t)
	var leader string
	ta.must("GET", "/v1/status/leader", "", &leader)
	if leader == "" {
		t.Error("no leader")
	}
	var peers []string
	ta.must("GET", "/v1/status/peers", "", &peers)
	if len(peers) == 0 {
		t.Error("no peers")
	}
	var self struct {
		Config map[string]any               `json:"config"`
		Member map[string]any               `json:"member"`
		Stats  map[string]map[string]string `json:"stats"`
	}
	ta.must("GET", "/v1/agent/self?pretty", "", &self)
	if self.Stats["client"]["node_id"] != ta.agent.NodeID() || self.Config["Version"] == nil {
		t.Errorf("self = %+v", self)
	}
	if s, _ := self.Config["Server"].(map[string]any); s["Enabled"] != true {
		t.Errorf("self server = %v", self.Config["Server"])
	}
	var health httpapi.AgentHealthResponse
	ta.must("GET", "/v1/agent/health", "", &health)
	if health.Server == nil || !health.Server.Ok || health.Client == nil || !health.Client.Ok {
		t.Errorf("health = %+v", health)
	}
}

func TestNewAgentValidates(t *testing.T) {
	_, err := NewAgent(&Config{}, nil)
	if err == nil || !strings.Contains(err.Error(), "must run a server, a client or both") || !strings.Contains(err.Error(), "data_dir is required") {
		t.Fatalf("NewAgent without dev mode: %v", err)
	}
}

func TestAgentShutdownWithoutStart(t *testing.T) {
	a, err := NewAgent(&Config{DevMode: true, HTTPPort: 0}, nil)
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	if a.HTTPAddr() == "" || strings.HasSuffix(a.HTTPAddr(), ":0") {
		t.Errorf("HTTPAddr = %q, want the picked port", a.HTTPAddr())
	}
	if err := a.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := a.Shutdown(); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if err := a.Start(); err == nil {
		t.Fatal("Start after Shutdown succeeded")
	}
}
