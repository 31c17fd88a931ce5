package server

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TestClusterJoinWaitingServers: servers with bootstrap_expect = 0 and
// nothing to join elect no leader and say they wait to be joined; joined
// from a server of a cluster (gossip from the cluster's side), they
// become its voters and replicate its state. Force-leave with prune of one
// that stopped makes serf forget it, and the leader removes it from raft
// at once (autopilot's dead-server cleanup is off here: it is not what
// removes it).
func TestClusterJoinWaitingServers(t *testing.T) {
	noCleanup := func(c *Config) {
		ap := structs.DefaultAutopilotConfig()
		ap.CleanupDeadServers = false
		c.Autopilot = ap
	}
	a := clusterServer(t, "a", newTestStores(), func(c *Config) { c.Cluster.BootstrapExpect = 1; noCleanup(c) })
	var waiting []*Server
	for _, name := range []string{"b", "c"} {
		s := clusterServer(t, name, newTestStores(), func(c *Config) { c.Cluster.BootstrapExpect = 0; noCleanup(c) })
		if !s.AwaitingJoin() || s.Leader() != "" || len(s.voters()) != 0 {
			t.Fatalf("%s: awaiting join %v, leader %q, voters %v: want a server that waits", name, s.AwaitingJoin(), s.Leader(), s.voters())
		}
		waiting = append(waiting, s)
	}
	if a.AwaitingJoin() {
		t.Fatal("a, which bootstrapped, says it waits to be joined")
	}
	reg, err := rpcapi.JobRegister.Call(context.Background(), a, &structs.JobRegisterRequest{Job: testJob("shared", 1, 100, 64)})
	if err != nil {
		t.Fatal(err)
	}
	b, c := waiting[0], waiting[1]
	if n, err := a.Join([]string{b.SerfAddr(), c.SerfAddr()}); n != 2 || err != nil {
		t.Fatalf("join = %d, %v; want 2 joined", n, err)
	}
	waitNotified(t, a.leaderNotify, "b and c to be voters", func() (bool, string) {
		return len(a.voters()) == 3, fmt.Sprint(a.voters())
	})
	for _, s := range waiting {
		waitNotified(t, s.indexNotify, s.config.NodeName+" to replicate the job", func() (bool, string) {
			return s.fsm.State().LatestIndex() >= reg.Index, "not yet"
		})
		if j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "shared"); j == nil {
			t.Fatalf("%s lacks the job", s.config.NodeName)
		}
		if s.AwaitingJoin() || s.leader() {
			t.Errorf("%s: awaiting join %v, leads %v; want a follower of a", s.config.NodeName, s.AwaitingJoin(), s.leader())
		}
	}

	mem, err := b.ServerMembers(context.Background(), &structs.ServerMembersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range mem.Members {
		names = append(names, m.Name)
	}
	if want := []string{"b", "a", "c"}; !slices.Equal(names, want) {
		t.Errorf("b's members %v, want %v (itself first, then by name)", names, want)
	}

	if err := c.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ServerForceLeave(context.Background(), &structs.ForceLeaveRequest{Node: "c", Prune: true}); err != nil {
		t.Fatalf("force-leave: %v", err)
	}
	waitNotified(t, a.leaderNotify, "c gone from serf and raft", func() (bool, string) {
		for _, m := range a.cluster.serf.Members() {
			if m.Name == "c" {
				return false, "serf still lists c as " + m.Status.String()
			}
		}
		v := a.voters()
		return len(v) == 2 && !slices.Contains(v, "c-id"), fmt.Sprint(v)
	})
	for _, m := range a.cluster.serf.Members() {
		if m.Status != serf.StatusAlive {
			t.Errorf("member %s is %s", m.Name, m.Status)
		}
	}
	// memberlist probes c until it finds it dead, and does not wait for a
	// probe in flight at shutdown: let it finish first (goleak).
	for _, s := range []*Server{a, b} {
		waitNotified(t, s.leaderNotify, s.config.NodeName+"'s memberlist to find c dead", func() (bool, string) {
			for _, n := range s.cluster.serf.Memberlist().Members() {
				if n.Name == "c" {
					return false, "c not yet dead"
				}
			}
			return true, ""
		})
	}
}
