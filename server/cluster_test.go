package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// clusterWait bounds the waits of the cluster tests: servers gossip,
// elect and replicate over loopback TCP, on a loaded machine.
const clusterWait = 90 * time.Second

// testStores are a server's raft stores, kept across its restarts.
type testStores struct {
	store *raft.InmemStore
	snaps *raft.InmemSnapshotStore
}

func newTestStores() *testStores {
	return &testStores{store: raft.NewInmemStore(), snaps: raft.NewInmemSnapshotStore()}
}

// clusterServer starts a server of a cluster on loopback (RPC port and
// serf port picked free), named name, with raft ID name+"-id". It is shut
// down at the end of the test unless the test did.
func clusterServer(t *testing.T, name string, st *testStores, mutate func(*Config)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout = 500 * time.Millisecond
	rc.ElectionTimeout = 500 * time.Millisecond
	rc.LeaderLeaseTimeout = 250 * time.Millisecond
	cfg := &Config{
		NodeName: name, RaftID: name + "-id", NumWorkers: 1, RaftConfig: rc,
		Logger:   slog.New(slog.DiscardHandler),
		LogStore: st.store, StableStore: st.store, SnapshotStore: st.snaps,
		Cluster: &ClusterConfig{RPCListener: ln, SerfBind: "127.0.0.1:0", BootstrapExpect: 3, Version: "test"},
	}
	if mutate != nil {
		mutate(cfg)
	}
	s, err := NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewServer %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(); err != nil {
			t.Errorf("Shutdown %s: %v", name, err)
		}
	})
	return s
}

// waitNotified waits until cond holds, checking it each time n notifies
// (and at least every second, for conditions no notifier covers, such as
// gossip), failing the test after clusterWait.
func waitNotified(t *testing.T, n *notifier, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		ch := n.wait()
		ok, why := cond()
		if ok {
			return
		}
		recheck := time.NewTimer(time.Second) // gossip changes are not notified
		select {
		case <-ch:
		case <-recheck.C:
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s: %s", clusterWait, what, why)
		}
		recheck.Stop()
	}
}

// startCluster starts three servers that bootstrap together: the second
// and third join the first.
func startCluster(t *testing.T, mutate func(i int, c *Config)) []*Server {
	t.Helper()
	var servers []*Server
	for i := range 3 {
		name := fmt.Sprintf("s%d", i+1)
		var join []string
		if i > 0 {
			join = []string{servers[0].SerfAddr()}
		}
		servers = append(servers, clusterServer(t, name, newTestStores(), func(c *Config) {
			c.Cluster.StartJoin = join
			if mutate != nil {
				mutate(i, c)
			}
		}))
	}
	waitLeader(t, servers)
	return servers
}

// waitLeader waits until every server knows the same established leader
// and returns it.
func waitLeader(t *testing.T, servers []*Server) *Server {
	t.Helper()
	var leader *Server
	waitNotified(t, servers[0].leaderNotify, "a leader that every server knows", func() (bool, string) {
		leader = nil
		for _, s := range servers {
			if s.leader() {
				leader = s
			}
		}
		if leader == nil {
			return false, "no server leads"
		}
		for _, s := range servers {
			if addr, _ := s.leaderRPC(); addr != leader.cluster.rpcAdvertise {
				return false, fmt.Sprintf("%s sees leader %q, not %s", s.config.NodeName, addr, leader.cluster.rpcAdvertise)
			}
		}
		return true, ""
	})
	return leader
}

// followers returns the servers that do not lead.
func followers(servers []*Server) []*Server {
	var out []*Server
	for _, s := range servers {
		if !s.leader() {
			out = append(out, s)
		}
	}
	return out
}

// TestClusterBootstrapsAndForwards: three servers that expect three
// bootstrap one raft cluster through serf; a write sent to a follower is
// forwarded to the leader (same descriptor, same reply), a read sent to a
// follower is the leader's, a ?stale read is the follower's own, and every
// read says a leader is known.
func TestClusterBootstrapsAndForwards(t *testing.T) {
	servers := startCluster(t, nil)
	for _, s := range servers {
		waitNotified(t, s.leaderNotify, s.config.NodeName+" to have the three voters", func() (bool, string) {
			v := s.voters()
			return len(v) == 3, fmt.Sprint(v)
		})
	}
	f := followers(servers)[0]
	ctx := context.Background()
	reg, err := rpcapi.JobRegister.Call(ctx, f, &structs.JobRegisterRequest{Job: testJob("web", 1, 100, 64)})
	if err != nil {
		t.Fatalf("register through a follower: %v", err)
	}
	if reg.EvalID == "" || reg.Index == 0 {
		t.Fatalf("register reply = %+v", reg)
	}
	got, err := rpcapi.JobGet.Call(ctx, f, &structs.JobSpecificRequest{JobID: "web"})
	if err != nil || got.Job == nil {
		t.Fatalf("read through a follower: %+v, %v", got, err)
	}
	if !got.KnownLeader {
		t.Errorf("a read's KnownLeader is false")
	}
	waitNotified(t, f.indexNotify, "the follower to apply the registration", func() (bool, string) {
		return f.fsm.State().LatestIndex() >= reg.Index, "not yet"
	})
	stale, err := rpcapi.JobGet.Call(ctx, f, &structs.JobSpecificRequest{JobID: "web", QueryOptions: structs.QueryOptions{AllowStale: true}})
	if err != nil || stale.Job == nil || !stale.KnownLeader {
		t.Fatalf("stale read: %+v, %v", stale, err)
	}
	ids := map[string]bool{}
	for _, s := range servers {
		// Each server learns the ID when it applies the leader's entry.
		waitNotified(t, s.indexNotify, s.config.NodeName+" to apply the cluster ID", func() (bool, string) {
			return s.clusterID() != "", "no cluster ID yet"
		})
		ids[s.clusterID()] = true
	}
	if len(ids) != 1 {
		t.Errorf("cluster IDs = %v, want one ID shared by every server", ids)
	}
}

// TestClusterWorkersOnFollowers: a follower's scheduler worker takes the
// evaluation from the leader's broker, schedules it on its own state and
// has the leader commit the plan: with no worker on the leader, a job is
// placed all the same.
func TestClusterWorkersOnFollowers(t *testing.T) {
	servers := startCluster(t, func(i int, c *Config) {
		if i == 0 {
			c.NumWorkers = -1 // s1 schedules nothing
		}
	})
	s1 := servers[0]
	if !s1.leader() {
		leader := waitLeader(t, servers)
		if err := leader.raft.LeadershipTransferToServer(s1.raftID(), raft.ServerAddress(s1.cluster.rpcAdvertise)).Error(); err != nil {
			t.Fatalf("hand leadership to s1: %v", err)
		}
	}
	if waitLeader(t, servers) != s1 {
		t.Fatal("s1 does not lead")
	}
	ctx := context.Background()
	if _, err := rpcapi.NodeRegister.Call(ctx, s1, &structs.NodeRegisterRequest{Node: testNode("n1", 4000, 4096)}); err != nil {
		t.Fatal(err)
	}
	reg, err := rpcapi.JobRegister.Call(ctx, s1, &structs.JobRegisterRequest{Job: testJob("web", 2, 100, 64)})
	if err != nil {
		t.Fatal(err)
	}
	waitNotified(t, s1.indexNotify, "the job's evaluation to complete", func() (bool, string) {
		e, err := s1.State().EvalByID(nil, reg.EvalID)
		if err != nil || e == nil {
			return false, fmt.Sprint(e, err)
		}
		return e.Status == structs.EvalStatusComplete, e.Status
	})
	if n := len(allocsOf(t, s1, "web", structs.AllocDesiredStatusRun)); n != 2 {
		t.Fatalf("%d allocations placed, want 2", n)
	}
}

// TestClusterLeaderLoss: the leader stops; the two others elect a new one,
// and a write sent to either is applied, once.
func TestClusterLeaderLoss(t *testing.T) {
	servers := startCluster(t, nil)
	old := waitLeader(t, servers)
	if err := old.Shutdown(); err != nil {
		t.Fatal(err)
	}
	var rest []*Server
	for _, s := range servers {
		if s != old {
			rest = append(rest, s)
		}
	}
	leader := waitLeader(t, rest)
	f := followers(rest)[0]
	req := &structs.JobRegisterRequest{Job: testJob("after", 1, 100, 64), WriteRequest: structs.WriteRequest{RequestID: structs.GenerateUUID()}}
	first, err := rpcapi.JobRegister.Call(context.Background(), f, req)
	if err != nil {
		t.Fatalf("register after the leader's loss: %v", err)
	}
	again, err := rpcapi.JobRegister.Call(context.Background(), leader, req)
	if err != nil || again.EvalID != first.EvalID || again.Index != first.Index {
		t.Fatalf("a repeat of the write = %+v, %v; want the first reply %+v", again, err, first)
	}
}

// TestClusterBootstrapExpectMismatch: servers that disagree on
// bootstrap_expect do not bootstrap, and say why.
func TestClusterBootstrapExpectMismatch(t *testing.T) {
	logs := make(chan slog.Record, 4096)
	s1 := clusterServer(t, "s1", newTestStores(), func(c *Config) {
		c.Cluster.BootstrapExpect = 2
		c.Logger = slog.New(recordHandler{msgs: logs})
	})
	s2 := clusterServer(t, "s2", newTestStores(), func(c *Config) {
		c.Cluster.BootstrapExpect = 3
		c.Cluster.StartJoin = []string{s1.SerfAddr()}
	})
	waitRecord(t, logs, "servers disagree on bootstrap_expect: not bootstrapping; set the same value on every server")
	for _, s := range []*Server{s1, s2} {
		if v := s.voters(); len(v) != 0 {
			t.Errorf("%s has voters %v: it bootstrapped", s.config.NodeName, v)
		}
	}
}

// TestClusterRefusesAnotherClustersServer: a server whose state belongs to
// another cluster cannot join this one's gossip pool: the join fails
// with an error naming both clusters, and neither cluster changes.
func TestClusterRefusesAnotherClustersServer(t *testing.T) {
	alone := func(c *Config) { c.Cluster.BootstrapExpect = 1 }
	a := clusterServer(t, "a", newTestStores(), alone)
	b := clusterServer(t, "b", newTestStores(), alone)
	for _, s := range []*Server{a, b} {
		waitNotified(t, s.indexNotify, s.config.NodeName+" to write its cluster ID", func() (bool, string) {
			return s.clusterID() != "", "no cluster ID"
		})
	}
	waitNotified(t, a.leaderNotify, "a's cluster ID in its tags", func() (bool, string) {
		return a.cluster.serf.LocalMember().Tags[tagCluster] == a.clusterID(), "not gossiped yet"
	})
	_, err := b.Join([]string{a.SerfAddr()})
	if err == nil || !strings.Contains(err.Error(), "belongs to cluster") {
		t.Fatalf("join = %v, want a refusal naming the clusters", err)
	}
	for _, s := range []*Server{a, b} {
		if v := s.voters(); len(v) != 1 {
			t.Errorf("%s: voters %v, want itself only", s.config.NodeName, v)
		}
	}
}

// TestClusterSnapshotRoundTrip: a snapshot saved, then restored after the
// state changed, brings the state back on every server.
func TestClusterSnapshotRoundTrip(t *testing.T) {
	servers := startCluster(t, nil)
	leader := waitLeader(t, servers)
	ctx := context.Background()
	if _, err := rpcapi.JobRegister.Call(ctx, leader, &structs.JobRegisterRequest{Job: testJob("kept", 1, 100, 64)}); err != nil {
		t.Fatal(err)
	}
	saved, err := rpcapi.SnapshotSave.Call(ctx, followers(servers)[0], &structs.SnapshotSaveRequest{})
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	if _, err := rpcapi.JobDeregister.Call(ctx, leader, &structs.JobDeregisterRequest{JobID: "kept", Namespace: structs.DefaultNamespace, Purge: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := rpcapi.SnapshotRestore.Call(ctx, followers(servers)[1], &structs.SnapshotRestoreRequest{Archive: []byte("not an archive")}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("restore of garbage = %v, want KindInvalid", err)
	}
	if _, err := rpcapi.SnapshotRestore.Call(ctx, followers(servers)[1], &structs.SnapshotRestoreRequest{Archive: saved.Archive}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	for _, s := range servers {
		waitNotified(t, s.indexNotify, s.config.NodeName+" to hold the restored job", func() (bool, string) {
			j, err := s.State().JobByID(nil, structs.DefaultNamespace, "kept")
			return j != nil, fmt.Sprint(err)
		})
	}
}

// TestClusterRecover: when two of three servers are lost for good, the
// third, started with Recover, leads alone with its state, and a new
// server joins it.
func TestClusterRecover(t *testing.T) {
	stores := []*testStores{newTestStores(), newTestStores(), newTestStores()}
	var servers []*Server
	for i := range 3 {
		var join []string
		if i > 0 {
			join = []string{servers[0].SerfAddr()}
		}
		servers = append(servers, clusterServer(t, fmt.Sprintf("s%d", i+1), stores[i], func(c *Config) { c.Cluster.StartJoin = join }))
	}
	leader := waitLeader(t, servers)
	reg, err := rpcapi.JobRegister.Call(context.Background(), leader, &structs.JobRegisterRequest{Job: testJob("survivor", 1, 100, 64)})
	if err != nil {
		t.Fatal(err)
	}
	s1 := servers[0]
	waitNotified(t, s1.indexNotify, "s1 to apply the job", func() (bool, string) {
		return s1.fsm.State().LatestIndex() >= reg.Index, "not yet"
	})
	for _, s := range servers {
		if err := s.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}
	r := clusterServer(t, "s1", stores[0], func(c *Config) { c.Recover = true })
	if !r.leader() {
		t.Fatal("the recovered server does not lead")
	}
	if j, _ := r.State().JobByID(nil, structs.DefaultNamespace, "survivor"); j == nil {
		t.Fatal("the recovered server lost the job")
	}
	n := clusterServer(t, "s4", newTestStores(), func(c *Config) {
		c.Cluster.BootstrapExpect = 0
		c.Cluster.StartJoin = []string{r.SerfAddr()}
	})
	waitNotified(t, r.leaderNotify, "s4 to be a voter", func() (bool, string) {
		return len(r.voters()) == 2, fmt.Sprint(r.voters())
	})
	waitNotified(t, n.indexNotify, "s4 to hold the job", func() (bool, string) {
		j, _ := n.State().JobByID(nil, structs.DefaultNamespace, "survivor")
		return j != nil, "not yet"
	})
}
