package server

import (
	"context"
	"slices"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestPaginate(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		name    string
		perPage int32
		token   string
		want    []string
		next    string
	}{
		{"no paging", 0, "", items, ""},
		{"first page", 2, "", []string{"a", "b"}, "c"},
		{"middle page", 2, "c", []string{"c", "d"}, "e"},
		{"last page", 2, "e", []string{"e"}, ""},
		{"exact fit", 5, "", items, ""},
		{"token of a deleted item", 2, "bb", []string{"c", "d"}, "e"},
		{"token past the end", 2, "z", []string{}, ""},
		{"token without paging", 0, "d", []string{"d", "e"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var meta structs.QueryMeta
			got := paginate(items, func(s string) string { return s }, &structs.QueryOptions{PerPage: tc.perPage, NextToken: tc.token}, &meta)
			if !slices.Equal(got, tc.want) || meta.NextToken != tc.next {
				t.Errorf("got %v next %q, want %v next %q", got, meta.NextToken, tc.want, tc.next)
			}
		})
	}
}

// TestEvalListPages walks the evaluations one page at a time, as Nomad's
// clients do with per_page and next_token.
func TestEvalListPages(t *testing.T) {
	// No workers: the evaluations stay as registered. A worker would add
	// each job's blocked evaluation (there is no node) whenever it gets to
	// it, under load in the middle of the walk.
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		registerJob(t, s, testJob(id, 1, 100, 100))
	}
	all, err := s.EvalList(ctx, &structs.EvalListRequest{})
	if err != nil || len(all.Evaluations) < 3 {
		t.Fatalf("%+v, %v", all, err)
	}
	var walked []string
	token := ""
	for range len(all.Evaluations) + 1 {
		page, err := s.EvalList(ctx, &structs.EvalListRequest{QueryOptions: structs.QueryOptions{PerPage: 1, NextToken: token}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Evaluations) != 1 {
			t.Fatalf("page of %d evaluations", len(page.Evaluations))
		}
		walked = append(walked, page.Evaluations[0].ID)
		token = page.NextToken
		if token == "" {
			break
		}
	}
	want := make([]string, 0, len(all.Evaluations))
	for _, e := range all.Evaluations {
		want = append(want, e.ID)
	}
	if !slices.Equal(walked, want) {
		t.Errorf("pages %v, want %v", walked, want)
	}
}
