package server

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestRaftRemovePeerUnknown: removing a server the raft configuration does
// not hold is a not-found error whose text is the one Nomad's API clients
// match (`id "X" was not found in the Raft configuration`).
func TestRaftRemovePeerUnknown(t *testing.T) {
	s := newTestServer(t, nil)
	for _, tc := range []struct {
		name string
		req  structs.RaftPeerRemoveRequest
		want string
	}{
		{"by id", structs.RaftPeerRemoveRequest{ID: "nope"}, `id "nope" was not found in the Raft configuration`},
		{"by address", structs.RaftPeerRemoveRequest{Address: "127.0.0.1:1"}, `address "127.0.0.1:1" was not found in the Raft configuration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.RaftRemovePeer(context.Background(), &tc.req)
			if err == nil {
				t.Fatal("RaftRemovePeer of an unknown server succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if k := structs.KindOf(err); k != structs.KindNotFound {
				t.Errorf("error kind %v, want not found", k)
			}
		})
	}
}

// TestForceLeaveUnknownMember: force-leave of a name the gossip pool does
// not know succeeds and changes nothing, as with Nomad (scripts run it to
// make sure a server is gone, whether or not it still is a member).
func TestForceLeaveUnknownMember(t *testing.T) {
	s := clusterServer(t, "one", newTestStores(), func(c *Config) { c.Cluster.BootstrapExpect = 1 })
	before := len(s.cluster.serf.Members())
	for _, prune := range []bool{false, true} {
		if _, err := s.ServerForceLeave(context.Background(), &structs.ForceLeaveRequest{Node: "nope", Prune: prune}); err != nil {
			t.Fatalf("force-leave of an unknown member (prune %v): %v", prune, err)
		}
	}
	if after := len(s.cluster.serf.Members()); after != before {
		t.Errorf("members: %d before, %d after", before, after)
	}
	if _, err := s.ServerForceLeave(context.Background(), &structs.ForceLeaveRequest{}); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("force-leave of no name: error %v, want invalid", err)
	}
}
