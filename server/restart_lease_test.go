package server

import (
	"context"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// TestRestartLeases: a group holds at most limit leases; a holder asking
// again renews its own; a release, an expiry or a stopped holder frees a
// slot.
func TestRestartLeases(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	g := leaseGroup{namespace: "default", job: "web", group: "g"}
	other := leaseGroup{namespace: "default", job: "web", group: "other"}
	stopped := map[string]bool{}
	alive := func(id string) bool { return !stopped[id] }
	var l restartLeases
	steps := []struct {
		name    string
		do      func() (bool, int)
		granted bool
		others  int
	}{
		{"first of the group", func() (bool, int) { return l.acquire(g, "a1", 1, time.Minute, t0, alive) }, true, 0},
		{"second waits", func() (bool, int) { return l.acquire(g, "a2", 1, time.Minute, t0, alive) }, false, 1},
		{"another group is not held back", func() (bool, int) { return l.acquire(other, "b1", 1, time.Minute, t0, alive) }, true, 0},
		{"the holder renews", func() (bool, int) { return l.acquire(g, "a1", 1, time.Minute, t0.Add(30*time.Second), alive) }, true, 0},
		{"still held after the first TTL (renewed)", func() (bool, int) {
			return l.acquire(g, "a2", 1, time.Minute, t0.Add(70*time.Second), alive)
		}, false, 1},
		{"expired: the next gets it", func() (bool, int) {
			return l.acquire(g, "a2", 1, time.Minute, t0.Add(90*time.Second), alive)
		}, true, 0},
		{"released: the next gets it", func() (bool, int) {
			l.release(g, "a2")
			return l.acquire(g, "a3", 1, time.Minute, t0.Add(91*time.Second), alive)
		}, true, 0},
		{"a stopped holder frees its slot", func() (bool, int) {
			stopped["a3"] = true
			return l.acquire(g, "a4", 1, time.Minute, t0.Add(92*time.Second), alive)
		}, true, 0},
		{"max_parallel 2: one more fits", func() (bool, int) { return l.acquire(g, "a5", 2, time.Minute, t0.Add(93*time.Second), alive) }, true, 1},
		{"max_parallel 2: the third waits", func() (bool, int) { return l.acquire(g, "a6", 2, time.Minute, t0.Add(93*time.Second), alive) }, false, 2},
	}
	for _, st := range steps {
		granted, others := st.do()
		if granted != st.granted || others != st.others {
			t.Fatalf("%s: granted %t with %d others, want %t with %d", st.name, granted, others, st.granted, st.others)
		}
	}
}

// TestAllocRestartLeaseEndpoint: the leases of a service group with
// max_parallel 1 go one at a time; a group without max_parallel needs
// none; only the node an allocation runs on may ask for its lease.
func TestAllocRestartLeaseEndpoint(t *testing.T) {
	s := newTestServer(t, nil)
	n := testNode("n1", 4000, 4096)
	registerNode(t, s, n)
	job := testJob("web", 2, 100, 64)
	job.Type = structs.JobTypeService
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, MinHealthyTime: time.Second, HealthyDeadline: 5 * time.Minute}
	registerJob(t, s, job)
	batch := testJob("once", 1, 100, 64)
	batch.Type = structs.JobTypeBatch
	registerJob(t, s, batch)
	waitState(t, s, "the allocations to be placed", func(ws memdb.WatchSet) (bool, string) {
		n1, n2 := len(allocsOfWatch(t, s, ws, "web", structs.AllocDesiredStatusRun)), len(allocsOfWatch(t, s, ws, "once", structs.AllocDesiredStatusRun))
		return n1 == 2 && n2 == 1, "not yet"
	})
	web, once := allocsOf(t, s, "web", ""), allocsOf(t, s, "once", "")
	ask := func(allocID string, release bool, secret string) (*structs.AllocRestartLeaseResponse, error) {
		return s.AllocRestartLease(context.Background(), &structs.AllocRestartLeaseRequest{NodeID: n.ID, SecretID: secret, AllocID: allocID, Release: release})
	}
	r, err := ask(web[0].ID, false, n.SecretID)
	if err != nil || !r.Granted || r.TTL != 5*time.Minute || r.Limit != 1 {
		t.Fatalf("first lease: %+v, %v; want granted for 5m", r, err)
	}
	if r, err := ask(web[1].ID, false, n.SecretID); err != nil || r.Granted || r.RetryIn <= 0 || r.Holders != 1 {
		t.Fatalf("second lease while the first is held: %+v, %v; want denied with a retry", r, err)
	}
	if r, err := ask(web[0].ID, true, n.SecretID); err != nil || !r.Granted {
		t.Fatalf("release: %+v, %v", r, err)
	}
	if r, err := ask(web[1].ID, false, n.SecretID); err != nil || !r.Granted {
		t.Fatalf("second lease after the release: %+v, %v; want granted", r, err)
	}
	if r, err := ask(once[0].ID, false, n.SecretID); err != nil || !r.Granted || r.TTL != 0 {
		t.Fatalf("lease of a batch job: %+v, %v; want granted without a TTL (none needed)", r, err)
	}
	if _, err := ask(web[0].ID, false, "wrong"); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("lease with a wrong secret: %v, want permission denied", err)
	}
}
