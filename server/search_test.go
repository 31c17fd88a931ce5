package server

import (
	"context"
	"slices"
	"testing"

	"github.com/drover-io/drover/structs"
)

func matchIDs(ms []structs.SearchMatch) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestSearchPrefix(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	ctx := context.Background()
	registerNode(t, s, testNode("node-abc", 1000, 1000))
	web := registerJob(t, s, testJob("web", 1, 100, 100))
	registerJob(t, s, testJob("webapp", 1, 100, 100))
	registerJob(t, s, testJob("api", 1, 100, 100))
	upsertNamespace(t, s, &structs.Namespace{Name: "dev"})
	other := testJob("web-dev", 1, 100, 100)
	other.Namespace = "dev"
	registerJob(t, s, other)

	resp, err := s.Search(ctx, &structs.SearchRequest{Text: "web", Context: structs.SearchContextJobs})
	if err != nil {
		t.Fatal(err)
	}
	if got := matchIDs(resp.Matches["jobs"]); !slices.Equal(got, []string{"web", "webapp"}) || resp.Truncations["jobs"] || len(resp.Matches) != 1 {
		t.Fatalf("jobs matching web in default: %v (%+v)", got, resp)
	}
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: "web", Context: "jobs", QueryOptions: structs.QueryOptions{Namespace: "*"}})
	if err != nil || !slices.Equal(matchIDs(resp.Matches["jobs"]), []string{"web", "web-dev", "webapp"}) {
		t.Fatalf("jobs matching web everywhere: %+v, %v", resp, err)
	}
	// "all" answers every context, empty ones too.
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: web.EvalID[:6], Context: structs.SearchContextAll})
	if err != nil {
		t.Fatal(err)
	}
	if got := matchIDs(resp.Matches["evals"]); !slices.Contains(got, web.EvalID) {
		t.Fatalf("evals matching %s: %v", web.EvalID[:6], got)
	}
	for _, c := range []string{"jobs", "allocs", "nodes", "node_pools", "deployment", "namespaces", "vars", "plugins", "volumes"} {
		if _, ok := resp.Matches[c]; !ok {
			t.Errorf("all: no %s entry", c)
		}
	}
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: "node-a", Context: "nodes"})
	if err != nil || !slices.Equal(matchIDs(resp.Matches["nodes"]), []string{"node-abc"}) {
		t.Fatalf("nodes: %+v, %v", resp, err)
	}
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: "de", Context: "namespaces"})
	if err != nil || !slices.Equal(matchIDs(resp.Matches["namespaces"]), []string{"default", "dev"}) {
		t.Fatalf("namespaces: %+v, %v", resp, err)
	}
	if _, err := s.Search(ctx, &structs.SearchRequest{Text: "x", Context: "commands"}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a fuzzy-only context in a prefix search: %v", err)
	}

	// Past the limit, the list is cut and says so.
	for i := range searchPrefixLimit + 1 {
		registerJob(t, s, testJob("batch-"+string(rune('a'+i)), 1, 100, 100))
	}
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: "batch-", Context: "jobs"})
	if err != nil || len(resp.Matches["jobs"]) != searchPrefixLimit || !resp.Truncations["jobs"] {
		t.Fatalf("truncated search: %d matches, truncated %v, %v", len(resp.Matches["jobs"]), resp.Truncations["jobs"], err)
	}
}

func TestSearchFuzzy(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	ctx := context.Background()
	job := testJob("sleeper", 1, 100, 100)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sleep", "args": []string{"10"}}
	job.TaskGroups[0].Services = []*structs.Service{{Name: "binder", Provider: "nomad"}}
	registerJob(t, s, job)
	img := testJob("cache", 1, 100, 100)
	img.TaskGroups[0].Tasks[0].Driver, img.TaskGroups[0].Tasks[0].Config = "docker", map[string]any{"image": "busybox:1"}
	registerJob(t, s, img)

	resp, err := s.Search(ctx, &structs.SearchRequest{Text: "bin", Context: structs.SearchContextAll, Fuzzy: true})
	if err != nil {
		t.Fatal(err)
	}
	cmds := resp.Matches["commands"]
	if len(cmds) != 1 || cmds[0].ID != "/bin/sleep" || !slices.Equal(cmds[0].Scope, []string{"default", "sleeper", "web", "app"}) {
		t.Fatalf("commands matching bin: %+v", cmds)
	}
	if svcs := resp.Matches["services"]; len(svcs) != 1 || svcs[0].ID != "binder" || !slices.Equal(svcs[0].Scope, []string{"default", "sleeper", "web"}) {
		t.Fatalf("services matching bin: %+v", svcs)
	}
	if len(resp.Matches["jobs"]) != 0 || len(resp.Matches["images"]) != 0 {
		t.Fatalf("jobs or images matching bin: %+v", resp.Matches)
	}
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: "BUSY", Context: "images", Fuzzy: true})
	if err != nil || len(resp.Matches["images"]) != 1 || resp.Matches["images"][0].ID != "busybox:1" {
		t.Fatalf("images matching BUSY: %+v, %v", resp, err)
	}
	// Names that start with the text come first.
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: "e", Context: "jobs", Fuzzy: true})
	if err == nil {
		t.Fatalf("a one-letter fuzzy search: %+v", resp)
	}
	resp, err = s.Search(ctx, &structs.SearchRequest{Text: "ca", Context: "jobs", Fuzzy: true})
	if err != nil || !slices.Equal(matchIDs(resp.Matches["jobs"]), []string{"cache"}) || !slices.Equal(resp.Matches["jobs"][0].Scope, []string{"default"}) {
		t.Fatalf("jobs matching ca: %+v, %v", resp, err)
	}
}
