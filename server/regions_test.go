package server

import (
	"fmt"
	"slices"
	"testing"
)

// TestClusterRegionsShareGossip: servers of two regions, each a cluster
// of its own, joined into one gossip pool (as Nomad's API suite joins
// them) list both regions; neither adds the other to its raft
// configuration.
func TestClusterRegionsShareGossip(t *testing.T) {
	inRegion := func(r string) func(*Config) {
		return func(c *Config) { c.Region, c.Cluster.BootstrapExpect = r, 1 }
	}
	a := clusterServer(t, "a", newTestStores(), inRegion("regionA"))
	b := clusterServer(t, "b", newTestStores(), inRegion("regionB"))
	if got := a.Regions(); !slices.Equal(got, []string{"regionA"}) {
		t.Fatalf("a's regions before the join: %v", got)
	}
	for _, s := range []*Server{a, b} {
		waitNotified(t, s.indexNotify, s.config.NodeName+" to write its cluster ID", func() (bool, string) {
			return s.clusterID() != "", "no cluster ID"
		})
	}
	if n, err := b.Join([]string{a.SerfAddr()}); n != 1 || err != nil {
		t.Fatalf("join = %d, %v; want 1 joined", n, err)
	}
	for _, s := range []*Server{a, b} {
		waitNotified(t, s.leaderNotify, s.config.NodeName+" to list both regions", func() (bool, string) {
			got := s.Regions()
			return slices.Equal(got, []string{"regionA", "regionB"}), fmt.Sprint(got)
		})
		if v := s.voters(); len(v) != 1 || v[0] != string(s.raftID()) {
			t.Errorf("%s's voters %v, want itself alone", s.config.NodeName, v)
		}
		if m := s.members(); len(m) != 1 {
			t.Errorf("%s's region members: %d, want itself", s.config.NodeName, len(m))
		}
	}
	if a.clusterID() == b.clusterID() {
		t.Error("the two regions share a cluster ID")
	}
}
