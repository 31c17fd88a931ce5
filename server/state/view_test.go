package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"
)

// TestViewIsConsistent: a view keeps the rows and the index of its moment
// while the live store moves on (a blocking query read a table and then
// its index from the live store, and a write in between returned the old
// rows under the new index), and its watches fire on later writes.
func TestViewIsConsistent(t *testing.T) {
	s := newStore(t)
	job := testJob("web")
	if err := s.UpsertJob(10, job); err != nil {
		t.Fatal(err)
	}
	view := s.View()
	ws := memdb.NewWatchSet()
	jobs, err := view.Jobs(ws)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("view jobs = %v, %v; want 1", jobs, err)
	}
	if err := s.UpsertJob(11, testJob("api")); err != nil {
		t.Fatal(err)
	}
	if got := view.Index(TableJobs); got != 10 {
		t.Errorf("view index = %d after a later write, want 10", got)
	}
	if jobs, _ := view.Jobs(nil); len(jobs) != 1 {
		t.Errorf("view shows %d jobs after a later write, want 1", len(jobs))
	}
	if got := s.Index(TableJobs); got != 11 {
		t.Errorf("store index = %d, want 11", got)
	}
	if !fired(ws) {
		t.Error("a watch taken on the view did not fire on a later write to the store")
	}
	if view.AbandonCh() != s.AbandonCh() {
		t.Error("the view has an abandon channel of its own")
	}
}
