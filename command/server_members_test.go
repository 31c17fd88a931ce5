package command

import (
	"slices"
	"testing"

	"github.com/drover-io/drover/api"
)

// TestAwaitingJoin: server members names the alive servers that wait to
// be joined (bootstrap_expect 0, no cluster ID yet), and only those.
func TestAwaitingJoin(t *testing.T) {
	member := func(name, status, expect, cluster string) *api.AgentMember {
		tags := map[string]string{"expect": expect}
		if cluster != "" {
			tags["cluster_id"] = cluster
		}
		return &api.AgentMember{Name: name, Status: status, Tags: tags}
	}
	cases := []struct {
		name    string
		members []*api.AgentMember
		want    []string
	}{
		{"waiting", []*api.AgentMember{member("w", "alive", "0", "")}, []string{"w"}},
		{"joined", []*api.AgentMember{member("j", "alive", "0", "c1")}, nil},
		{"bootstraps", []*api.AgentMember{member("b", "alive", "3", "")}, nil},
		{"failed", []*api.AgentMember{member("f", "failed", "0", "")}, nil},
		{"no tags (a dev server)", []*api.AgentMember{{Name: "d", Status: "alive"}}, nil},
		{"mixed", []*api.AgentMember{member("a", "alive", "1", ""), member("w", "alive", "0", "")}, []string{"w"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := awaitingJoin(tc.members); !slices.Equal(got, tc.want) {
				t.Errorf("awaitingJoin = %v, want %v", got, tc.want)
			}
		})
	}
}
