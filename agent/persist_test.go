package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// persistentConfig is a non-dev agent on free ports with its state in
// dataDir, running the mock driver.
func persistentConfig(dataDir string, serverOn, clientOn bool, servers ...string) *Config {
	c := DefaultConfig()
	c.NodeName = "node-" + filepath.Base(dataDir)
	c.DataDir = dataDir
	c.HTTPPort, c.RPCPort, c.SerfPort = 0, 0, 0
	c.Server.Enabled = serverOn
	c.Server.BootstrapExpect = 1 // a single server: 0 waits to be joined
	c.Client.Enabled = clientOn
	c.Client.Servers = servers
	c.Plugins = map[string]*PluginConfig{"mock_driver": {Name: "mock_driver", Config: json.RawMessage(`{}`)}}
	return c
}

// startAgent starts an agent from cfg; the test's cleanup shuts it down
// (Shutdown is idempotent, so a test may shut it down earlier).
func startAgent(t *testing.T, cfg *Config) *testAgent {
	t.Helper()
	a, err := NewAgent(cfg, discardLogger())
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	if err := a.Start(); err != nil {
		_ = a.Shutdown()
		t.Fatalf("Start: %v", err)
	}
	ta := &testAgent{t: t, agent: a, base: "http://" + a.HTTPAddr(), hc: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(func() {
		ta.stop()
		unmountLeftovers(t, cfg.DataDir) // leftover_mounts_test.go
	})
	return ta
}

// stop shuts the agent down.
func (ta *testAgent) stop() {
	ta.t.Helper()
	ta.hc.CloseIdleConnections()
	if err := ta.agent.Shutdown(); err != nil {
		ta.t.Errorf("Shutdown: %v", err)
	}
}

// batchJobBody is a mock_driver batch job that runs for a moment and
// exits, so that no task outlives a non-dev agent's test.
func batchJobBody(id string) string {
	return fmt.Sprintf(`{"Job": {"ID": %q, "Type": "batch",
		"TaskGroups": [{"Name": "g", "Count": 2, "Tasks": [{"Name": "t", "Driver": "mock_driver",
		"Config": {"run_for": "200ms"}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`, id)
}

// waitAllocsComplete waits until the job has n allocations, all complete,
// and returns them sorted by ID.
func waitAllocsComplete(ta *testAgent, job string, n int) []*structs.AllocListStub {
	ta.t.Helper()
	var allocs []*structs.AllocListStub
	waitFor(ta.t, job+"'s allocations to complete", func() bool {
		ta.must("GET", "/v1/job/"+job+"/allocations", "", &allocs)
		if len(allocs) != n {
			return false
		}
		for _, a := range allocs {
			if a.ClientStatus != structs.AllocClientStatusComplete {
				return false
			}
		}
		return true
	})
	slices.SortFunc(allocs, func(a, b *structs.AllocListStub) int { return strings.Compare(a.ID, b.ID) })
	return allocs
}

func allocIDs(allocs []*structs.AllocListStub) []string {
	var out []string
	for _, a := range allocs {
		out = append(out, a.ID+"/"+a.EvalID+"/"+a.NodeID)
	}
	return out
}

// TestPersistenceAcrossRestart registers a job on a server+client agent,
// stops it and starts a new agent on the same data_dir: the job, its
// allocations and evaluations, and the node are back with the same IDs.
func TestPersistenceAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ta := startAgent(t, persistentConfig(dir, true, true))
	nodeID := ta.agent.NodeID()
	var reg structs.JobRegisterResponse
	ta.must("PUT", "/v1/jobs", batchJobBody("persist"), &reg)
	before := waitAllocsComplete(ta, "persist", 2)
	var evals []*structs.Evaluation
	ta.must("GET", "/v1/job/persist/evaluations", "", &evals)
	ta.stop()

	for _, f := range []string{"server/raft/raft.db", "server/node-id", "client/state.db"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("state file: %v", err)
		}
	}

	ta2 := startAgent(t, persistentConfig(dir, true, true))
	if got := ta2.agent.NodeID(); got != nodeID {
		t.Errorf("node ID after restart = %s, want %s", got, nodeID)
	}
	var job structs.Job
	ta2.must("GET", "/v1/job/persist", "", &job)
	if job.ID != "persist" || job.Type != "batch" {
		t.Fatalf("job after restart = %+v", job)
	}
	after := waitAllocsComplete(ta2, "persist", 2)
	if !slices.Equal(allocIDs(before), allocIDs(after)) {
		t.Errorf("allocations after restart = %v, want %v", allocIDs(after), allocIDs(before))
	}
	var evals2 []*structs.Evaluation
	ta2.must("GET", "/v1/job/persist/evaluations", "", &evals2)
	if len(evals2) != len(evals) || evals2[0].ID != evals[0].ID {
		t.Errorf("evaluations after restart = %d, want %d", len(evals2), len(evals))
	}
	var node structs.Node
	ta2.must("GET", "/v1/node/"+nodeID, "", &node)
	if node.ID != nodeID {
		t.Errorf("node after restart = %+v", node)
	}
	// The restarted server keeps working.
	ta2.must("PUT", "/v1/jobs", batchJobBody("second"), nil)
	waitAllocsComplete(ta2, "second", 2)
}

// writeConfig writes an agent config file for runCommand tests: free
// ports, a server and a client on dataDir.
func writeConfig(t *testing.T, dataDir string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.hcl")
	src := fmt.Sprintf(`data_dir = %q
ports {
  http = 0
  rpc  = 0
}
server {
  enabled          = true
  bootstrap_expect = 1
}
client { enabled = true }
`, dataDir)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadStateFileStopsAgent: a corrupt state file stops the agent with
// the path in the message; the file is left as it was; -state-move-aside
// moves it, and the agent then starts.
func TestBadStateFileStopsAgent(t *testing.T) {
	dir := t.TempDir()
	statePath := state.StatePath(dir)
	if err := os.MkdirAll(filepath.Dir(statePath), 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte("not a bolt file "), 512)
	if err := os.WriteFile(statePath, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := writeConfig(t, dir)

	var stdout, stderr syncBuffer
	code := runCommand([]string{"-config", cfgPath}, &stdout, &stderr, nil, nil)
	if code != 1 {
		t.Fatalf("exit code = %d, want 1; stderr %s", code, stderr.String())
	}
	for _, want := range []string{statePath, "corrupt", "-" + state.MoveAsideFlag} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if got, err := os.ReadFile(statePath); err != nil || !bytes.Equal(got, garbage) {
		t.Fatalf("state file changed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "server")); err == nil {
		t.Error("the server started before the state file was checked")
	}

	var out, errOut syncBuffer
	if code := runCommand([]string{"-config", cfgPath, "-" + state.MoveAsideFlag}, &out, &errOut, nil, nil); code != 0 {
		t.Fatalf("move aside: exit code %d: %s", code, errOut.String())
	}
	moved, _ := filepath.Glob(statePath + ".corrupt-*")
	if len(moved) != 1 || !strings.Contains(out.String(), moved[0]) {
		t.Fatalf("moved files %v; stdout %s", moved, out.String())
	}
	if got, err := os.ReadFile(moved[0]); err != nil || !bytes.Equal(got, garbage) {
		t.Fatalf("moved file differs: %v", err)
	}

	// Now the agent starts; while it runs, the file cannot be moved.
	ta := startAgent(t, persistentConfig(dir, true, true))
	var out2, errOut2 syncBuffer
	if code := runCommand([]string{"-data-dir", dir, "-" + state.MoveAsideFlag}, &out2, &errOut2, nil, nil); code != 1 || !strings.Contains(errOut2.String(), "locked") {
		t.Fatalf("move aside under a running agent: exit %d, stderr %s", code, errOut2.String())
	}
	ta.stop()
}

func TestMoveAsideWithoutDataDir(t *testing.T) {
	var stdout, stderr syncBuffer
	if code := runCommand([]string{"-dev", "-" + state.MoveAsideFlag}, &stdout, &stderr, nil, nil); code != 1 || !strings.Contains(stderr.String(), "data_dir") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	var out, errOut syncBuffer
	if code := runCommand([]string{"-data-dir", t.TempDir(), "-" + state.MoveAsideFlag}, &out, &errOut, nil, nil); code != 1 || !strings.Contains(errOut.String(), "does not exist") {
		t.Fatalf("exit %d, stderr %s", code, errOut.String())
	}
}

// TestTwoAgents runs a server agent and a client-only agent that reaches
// it over the RPC port: a job registered on the server runs on the client.
func TestTwoAgents(t *testing.T) {
	srv := startAgent(t, persistentConfig(t.TempDir(), true, false))
	if srv.agent.ClientEnabled() || strings.HasSuffix(srv.agent.RPCAddr(), ":0") {
		t.Fatalf("server agent: client %v, RPC %s", srv.agent.ClientEnabled(), srv.agent.RPCAddr())
	}
	cl := startAgent(t, persistentConfig(t.TempDir(), false, true, srv.agent.RPCAddr()))
	nodeID := cl.agent.NodeID()

	waitFor(t, "the client's node to be ready on the server", func() bool {
		var nodes []*structs.NodeListStub
		srv.must("GET", "/v1/nodes", "", &nodes)
		return len(nodes) == 1 && nodes[0].ID == nodeID && nodes[0].Status == structs.NodeStatusReady
	})
	srv.must("PUT", "/v1/jobs", batchJobBody("remote"), nil)
	allocs := waitAllocsComplete(srv, "remote", 2)
	for _, a := range allocs {
		if a.NodeID != nodeID {
			t.Errorf("alloc %s on node %s, want %s", a.ID, a.NodeID, nodeID)
		}
	}
	// The client-only agent forwards reads to the server.
	var jobs []*structs.JobListStub
	cl.must("GET", "/v1/jobs", "", &jobs)
	if len(jobs) != 1 || jobs[0].ID != "remote" {
		t.Errorf("client-only GET /v1/jobs = %+v", jobs)
	}
	cl.stop()
	srv.stop()
}

// TestRPCOverTheWire calls a server agent's RPC port directly: error kinds
// cross the wire, a node's secret crosses it, and a blocking query ends
// when its caller gives up.
func TestRPCOverTheWire(t *testing.T) {
	srv := startAgent(t, persistentConfig(t.TempDir(), true, false))
	rc, err := rpcclient.New(&rpcclient.Config{Servers: []string{srv.agent.RPCAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ctx := context.Background()

	_, err = rpcapi.NodeUpdateStatus.Call(ctx, rc, &structs.NodeUpdateStatusRequest{NodeID: "nope", SecretID: "x", Status: structs.NodeStatusReady})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("heartbeat of an unknown node: %v (kind %v), want not found", err, structs.KindOf(err))
	}
	if _, err := rpcapi.NodeRegister.Call(ctx, rc, &structs.NodeRegisterRequest{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("register without a node: %v, want invalid", err)
	}

	node := &structs.Node{ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Name: "wire", Status: structs.NodeStatusReady}
	reg, err := rpcapi.NodeRegister.Call(ctx, rc, &structs.NodeRegisterRequest{Node: node})
	if err != nil {
		t.Fatal(err)
	}
	if reg.HeartbeatTTL <= 0 || reg.Index == 0 {
		t.Fatalf("register response = %+v", reg)
	}
	// The secret crossed the wire: the right one authenticates, another does not.
	if _, err := rpcapi.NodeUpdateStatus.Call(ctx, rc, &structs.NodeUpdateStatusRequest{NodeID: node.ID, SecretID: node.SecretID}); err != nil {
		t.Fatalf("heartbeat with the node's secret: %v", err)
	}
	if _, err := rpcapi.NodeUpdateStatus.Call(ctx, rc, &structs.NodeUpdateStatusRequest{NodeID: node.ID, SecretID: "wrong"}); err == nil {
		t.Fatal("heartbeat with a wrong secret succeeded")
	}

	// A blocking query that would wait a minute ends when ctx does.
	bctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = rpcapi.NodeGetClientAllocs.Call(bctx, rc, &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID,
		QueryOptions: structs.QueryOptions{MinQueryIndex: reg.Index + 1000, MaxQueryTime: time.Minute}})
	if err == nil {
		t.Fatal("blocking query returned without error after its context ended")
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("blocking query took %s after its context ended", took)
	}
	// Shutdown does not wait for the server's side of the query (it was
	// cancelled with the connection).
	srv.stop()
}
