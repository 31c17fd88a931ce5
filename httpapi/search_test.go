package httpapi

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TestSearchRoutes: both searches as Nomad's API client calls them (its
// query options travel in the body).
func TestSearchRoutes(t *testing.T) {
	var got []*structs.SearchRequest
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.Search, func(_ context.Context, r *structs.SearchRequest) (*structs.SearchResponse, error) {
		got = append(got, r)
		if r.Fuzzy {
			return &structs.SearchResponse{
				Matches:     map[string][]structs.SearchMatch{"commands": {{ID: "/bin/sleep", Namespace: "default", Scope: []string{"default", "job1", "group1", "task1"}}}, "jobs": {}},
				Truncations: map[string]bool{"commands": false, "jobs": false},
				QueryMeta:   structs.QueryMeta{Index: 8},
			}, nil
		}
		return &structs.SearchResponse{
			Matches:     map[string][]structs.SearchMatch{"jobs": {{ID: "job1", Namespace: "default"}}},
			Truncations: map[string]bool{"jobs": true},
			QueryMeta:   structs.QueryMeta{Index: 7},
		}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	resp, qm, err := c.Search().PrefixSearch("job", contexts.Jobs, &nomadapi.QueryOptions{Namespace: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resp.Matches[contexts.Jobs], []string{"job1"}) || !resp.Truncations[contexts.Jobs] || qm.LastIndex != 7 {
		t.Fatalf("prefix search = %+v, %+v", resp, qm)
	}
	if r := got[0]; r.Text != "job" || r.Context != "jobs" || r.Fuzzy || r.Namespace != "dev" || r.Prefix != "" {
		t.Fatalf("server asked %+v", r)
	}
	fz, qm, err := c.Search().FuzzySearch("bin", contexts.All, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmds := fz.Matches[contexts.Commands]
	if len(cmds) != 1 || cmds[0].ID != "/bin/sleep" || !slices.Equal(cmds[0].Scope, []string{"default", "job1", "group1", "task1"}) || qm.LastIndex != 8 {
		t.Fatalf("fuzzy search = %+v, %+v", fz, qm)
	}
	if r := got[1]; r.Text != "bin" || r.Context != "all" || !r.Fuzzy {
		t.Fatalf("server asked %+v", r)
	}
}

// TestFilterSearch: with ACLs, a token sees the matches of what it may
// read only.
func TestFilterSearch(t *testing.T) {
	a := acl.New(&acl.Policy{Namespaces: []*acl.NamespaceRule{{Name: "dev", Capabilities: []string{acl.NamespaceCapabilityReadJob}}}})
	resp := &structs.SearchResponse{Matches: map[string][]structs.SearchMatch{
		"jobs":       {{ID: "a", Namespace: "default"}, {ID: "b", Namespace: "dev"}},
		"nodes":      {{ID: "n1"}},
		"namespaces": {{ID: "default"}, {ID: "dev"}},
	}}
	filterSearch(&aclGrant{acl: a}, resp)
	for c, want := range map[string][]string{"jobs": {"b"}, "nodes": {}, "namespaces": {"dev"}} {
		var ids []string
		for _, m := range resp.Matches[c] {
			ids = append(ids, m.ID)
		}
		if !slices.Equal(ids, want) && !(len(ids) == 0 && len(want) == 0) {
			t.Errorf("%s: %v, want %v", c, ids, want)
		}
	}
}
