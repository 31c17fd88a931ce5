package client

import (
	"context"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) {
	// The reconcile tests start real shims: this binary, as "shim".
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A -race binary sleeps a second at exit by default; every shim's
	// launcher exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}

// settle waits until every other goroutine of the test's synctest bubble
// is durably blocked (synctest.Wait: the client and its runners have done
// all they can without time passing), then requires cond. Only in a
// bubble; where the outcome needs time to pass, the test sleeps (fake
// time) for it first.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("the client settled without %s", what)
	}
}

type testClient struct {
	c      *Client
	srv    *fakeServer
	driver *mock.Driver
	db     *state.MemDB
}

func newTestClient(t *testing.T, srv *fakeServer, driver *mock.Driver, db *state.MemDB, dev bool) *testClient {
	t.Helper()
	if srv == nil {
		srv = newFakeServer()
	}
	if driver == nil {
		driver = mock.New(nil)
		t.Cleanup(driver.Shutdown)
	}
	if db == nil {
		db = state.NewMemDB()
	}
	c, err := New(&Config{
		RPC:      srv,
		Drivers:  map[string]drivers.DriverPlugin{mock.Name: driver},
		StateDB:  db,
		AllocDir: t.TempDir(),
		NodeName: "test-node",
		Meta:     map[string]string{"rack": "r1"},
		HTTPAddr: "127.0.0.1:4646",
		DevMode:  dev,
	})
	if err != nil {
		t.Fatal(err)
	}
	// New starts the driver manager: stop it even if the test never
	// starts or shuts down the client (Shutdown is idempotent).
	t.Cleanup(func() { _ = c.Shutdown() })
	c.updateInterval = 10 * time.Millisecond
	c.retryBase = 5 * time.Millisecond
	c.retryMax = 20 * time.Millisecond
	return &testClient{c: c, srv: srv, driver: driver, db: db}
}

func testJobAlloc(nodeID string, config map[string]any) *structs.Allocation {
	task := &structs.Task{Name: "web", Driver: mock.Name, Config: mock.UntilStopped(config), KillTimeout: time.Second,
		RestartPolicy: &structs.RestartPolicy{Interval: time.Hour, Mode: structs.RestartPolicyModeFail}}
	job := &structs.Job{ID: "example", Name: "example", Type: structs.JobTypeService, Namespace: "default",
		TaskGroups: []*structs.TaskGroup{{Name: "cache", Count: 1, Tasks: []*structs.Task{task}}}}
	return &structs.Allocation{ID: structs.GenerateUUID(), Name: "example.cache[0]", NodeID: nodeID, JobID: "example",
		Job: job, TaskGroup: "cache", Namespace: "default", DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus: structs.AllocClientStatusPending}
}

func TestClientRunsAllocLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, false)
		c, srv := tc.c, tc.srv
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); structs.KindOf(err) != structs.KindConflict {
			t.Errorf("second Start: %v", err)
		}
		srv.wait(t, "registration", func() bool { r, _ := srv.counts(); return r >= 1 })
		srv.mu.Lock()
		node := srv.nodes[c.NodeID()]
		srv.mu.Unlock()
		if node == nil || node.Status != structs.NodeStatusReady || node.Drivers[mock.Name] == nil || !node.Drivers[mock.Name].Healthy ||
			node.Attributes["driver."+mock.Name] != "1" || node.Datacenter != "dc1" || node.Name != "test-node" || node.Meta["rack"] != "r1" {
			t.Fatalf("registered node = %+v", node)
		}

		alloc := testJobAlloc(c.NodeID(), map[string]any{})
		srv.putAlloc(alloc)
		srv.wait(t, "alloc running on the server", func() bool {
			return srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusRunning
		})
		st, err := c.AllocState(alloc.ID)
		if err != nil || st.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("AllocState = %+v, %v", st, err)
		}
		if _, err := c.AllocState("nope"); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("AllocState(unknown) = %v", err)
		}
		if dir, err := c.AllocDir(alloc.ID); err != nil || dir == "" {
			t.Errorf("AllocDir = %q, %v", dir, err)
		}
		if err := c.SignalAlloc(context.Background(), alloc.ID, "web", "SIGHUP"); err != nil {
			t.Errorf("SignalAlloc: %v", err)
		}
		if err := c.RestartAlloc(context.Background(), alloc.ID, "", true); err != nil {
			t.Errorf("RestartAlloc: %v", err)
		}
		// The client reports its alloc's states to the servers in order: what
		// they see is what the client had.
		srv.wait(t, "the restart reported", func() bool {
			a := srv.alloc(alloc.ID)
			return a.TaskStates["web"].Restarts == 1 && a.ClientStatus == structs.AllocClientStatusRunning
		})
		if st, _ := c.AllocState(alloc.ID); st.TaskStates["web"].Restarts != 1 || st.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("client alloc state after the restart = %s, %d restarts", st.ClientStatus, st.TaskStates["web"].Restarts)
		}

		srv.stopAlloc(alloc.ID)
		srv.wait(t, "alloc complete on the server", func() bool {
			return srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusComplete
		})
		ts := srv.alloc(alloc.ID).TaskStates["web"]
		if n := len(ts.Events); n < 3 || ts.Events[n-1].Type != structs.TaskKilled || ts.Events[n-2].Type != structs.TaskTerminated {
			t.Errorf("server task events end with %+v", ts.Events[n-1])
		}

		dir, _ := c.AllocDir(alloc.ID)
		c.allocMu.Lock()
		ar := c.allocs[alloc.ID]
		c.allocMu.Unlock()
		srv.removeAlloc(alloc.ID)
		select { // the runner is destroyed, its directory removed
		case <-ar.DestroyCh():
		case <-time.After(hungBound):
			t.Fatal("the removed alloc's runner was not destroyed")
		}
		if _, err := c.AllocState(alloc.ID); err == nil {
			t.Errorf("AllocState of a removed alloc: no error")
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("alloc dir after removal: %v, want it gone", err)
		}

		stats := c.Stats()
		if stats["node_id"] != c.NodeID() || stats["num_allocations"] != "0" {
			t.Errorf("Stats = %v", stats)
		}
		if err := c.Shutdown(); err != nil {
			t.Fatal(err)
		}
		if err := c.Shutdown(); err != nil {
			t.Errorf("second Shutdown: %v", err)
		}
	})
}

func TestClientRegisterRetryAndHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		srv.registerErrs = 2
		srv.ttl = 20 * time.Millisecond
		tc := newTestClient(t, srv, nil, nil, false)
		if err := tc.c.Start(); err != nil {
			t.Fatal(err)
		}
		// Registrations are counted as they arrive: the first two fail, the
		// third succeeds. The node update loop may register the node again
		// once the driver's first fingerprint is in, at any time (late under
		// load), so the count is at least 3, not exactly 3.
		srv.wait(t, "registration after retries", func() bool {
			r, _ := srv.counts()
			return r >= 3 && srv.known(tc.c.NodeID())
		})
		srv.wait(t, "heartbeats", func() bool { _, h := srv.counts(); return h >= 2 })
		_, beats := srv.counts()
		srv.forgetNodes()
		// A heartbeat the servers answer "not found" registers the node again,
		// and heartbeats go on. (A late node update may register it first:
		// then no heartbeat is refused, and the node is back all the same.)
		srv.wait(t, "re-registration", func() bool {
			_, h := srv.counts()
			return srv.known(tc.c.NodeID()) && h > beats
		})
		if err := tc.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClientShutdownLeavesTasksAndRestores(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		driver := mock.New(nil)
		defer driver.Shutdown()
		db := state.NewMemDB()
		srv := newFakeServer()
		tc := newTestClient(t, srv, driver, db, false)
		nodeID := tc.c.NodeID()
		if err := tc.c.Start(); err != nil {
			t.Fatal(err)
		}
		alloc := testJobAlloc(nodeID, map[string]any{})
		srv.wait(t, "registration", func() bool { r, _ := srv.counts(); return r >= 1 })
		srv.putAlloc(alloc)
		srv.wait(t, "running", func() bool { return srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusRunning })

		// A MemDB cannot be reopened after Close: copy what a bbolt file would
		// keep into a new one for the next agent.
		ls, ts, _ := db.GetTaskRunnerState(alloc.ID, "web")
		allocs, _, _ := db.GetAllAllocations()
		id, _ := db.GetNodeIdentity()
		if err := tc.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
		if st, err := driver.InspectTask(context.Background(), ls.TaskHandle.Config.ID); err != nil || st.State != drivers.TaskStateRunning {
			t.Fatalf("task not left running: %+v %v", st, err)
		}
		db2 := state.NewMemDB()
		_ = db2.PutNodeIdentity(id)
		for _, a := range allocs {
			_ = db2.PutAllocation(a)
		}
		_ = db2.PutTaskRunnerLocalState(alloc.ID, "web", ls)
		_ = db2.PutTaskState(alloc.ID, "web", ts)

		tc2 := newTestClient(t, srv, driver, db2, false)
		if tc2.c.NodeID() != nodeID {
			t.Fatalf("node ID changed across restarts")
		}
		if st, err := tc2.c.AllocState(alloc.ID); err != nil || st.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("restored alloc state = %+v, %v", st, err)
		}
		if err := tc2.c.Start(); err != nil {
			t.Fatal(err)
		}
		srv.stopAlloc(alloc.ID)
		srv.wait(t, "complete", func() bool { return srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusComplete })
		started := 0
		for _, e := range srv.alloc(alloc.ID).TaskStates["web"].Events {
			if e.Type == structs.TaskStarted {
				started++
			}
		}
		if started != 1 {
			t.Errorf("task started %d times; want it re-attached, not restarted", started)
		}
		if err := tc2.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClientDevModeShutdownKillsTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, true)
		if err := tc.c.Start(); err != nil {
			t.Fatal(err)
		}
		alloc := testJobAlloc(tc.c.NodeID(), map[string]any{})
		tc.srv.wait(t, "registration", func() bool { r, _ := tc.srv.counts(); return r >= 1 })
		tc.srv.putAlloc(alloc)
		tc.srv.wait(t, "running", func() bool { return tc.srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusRunning })
		if err := tc.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
		if got := tc.srv.alloc(alloc.ID).ClientStatus; got != structs.AllocClientStatusComplete {
			t.Errorf("server status after dev shutdown = %s (the final flush must report the kill)", got)
		}
	})
}

func TestClientNodeIdentityPersists(t *testing.T) {
	db := state.NewMemDB()
	a := newTestClient(t, nil, nil, db, false)
	id := a.c.NodeID()
	// New starts nothing; a second client on the same StateDB keeps the ID.
	b := newTestClient(t, nil, nil, db, false)
	if b.c.NodeID() != id {
		t.Errorf("node ID changed: %s then %s", id, b.c.NodeID())
	}
	n := a.c.Node()
	n.Attributes["x"] = "y"
	if a.c.Node().Attributes["x"] != "" {
		t.Errorf("Node() is not a copy")
	}
	for _, k := range []string{"cpu.arch", "cpu.numcores", "cpu.totalcompute", "memory.totalbytes", "kernel.name", "unique.hostname", "drover.version"} {
		if n.Attributes[k] == "" {
			t.Errorf("attribute %s missing", k)
		}
	}
	if n.NodeResources.Cpu.CpuShares <= 0 || n.NodeResources.Memory.MemoryMB <= 0 {
		t.Errorf("resources = %+v", n.NodeResources)
	}
	if err := a.c.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

func TestFlushUpdatesCoalesces(t *testing.T) {
	tc := newTestClient(t, nil, nil, nil, false)
	c, srv := tc.c, tc.srv
	for i, status := range []string{structs.AllocClientStatusPending, structs.AllocClientStatusRunning, structs.AllocClientStatusComplete} {
		allocUpdater{c}.AllocStateUpdated(&structs.Allocation{ID: "a", ClientStatus: status, ClientDescription: string(rune('0' + i))})
	}
	netStatus := &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "172.26.64.4"}
	allocUpdater{c}.AllocStateUpdated(&structs.Allocation{ID: "b", ClientStatus: structs.AllocClientStatusRunning, NetworkStatus: netStatus})
	c.flushUpdates(context.Background())
	if len(srv.batches) != 1 || len(srv.batches[0]) != 2 {
		t.Fatalf("batches = %+v", srv.batches)
	}
	if a := srv.batches[0][0]; a.ID != "a" || a.ClientStatus != structs.AllocClientStatusComplete || a.NodeID != c.NodeID() {
		t.Errorf("update for a = %+v", a)
	}
	if b := srv.batches[0][1]; b.NetworkStatus == nil || *b.NetworkStatus != *netStatus {
		t.Errorf("update for b has NetworkStatus %+v, want the allocation's %+v", b.NetworkStatus, netStatus)
	}
	c.flushUpdates(context.Background())
	if len(srv.batches) != 1 {
		t.Errorf("an empty flush sent a batch")
	}
	_ = c.Shutdown()
}

func TestClientReportsAllocItCannotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, false)
		if err := tc.c.Start(); err != nil {
			t.Fatal(err)
		}
		tc.srv.wait(t, "registration", func() bool { r, _ := tc.srv.counts(); return r >= 1 })
		alloc := testJobAlloc(tc.c.NodeID(), nil)
		alloc.Job.TaskGroups[0].Tasks[0].Driver = "no_such_driver"
		tc.srv.putAlloc(alloc)
		tc.srv.wait(t, "failed on the server", func() bool { return tc.srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusFailed })
		if desc := tc.srv.alloc(alloc.ID).ClientDescription; desc == "" {
			t.Errorf("no description for the failure")
		}
		if err := tc.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
	})
}
