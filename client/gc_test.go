package client

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

func TestSelectGC(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cands := []gcCandidate{
		{ID: "c", FinishedAt: t0.Add(3 * time.Minute)},
		{ID: "a", FinishedAt: t0.Add(1 * time.Minute)},
		{ID: "b", FinishedAt: t0.Add(2 * time.Minute)},
		{ID: "z"}, // never finished: oldest
	}
	cfg := GCConfig{}.withDefaults()
	cfg.MaxAllocs = 5
	tests := []struct {
		name   string
		cands  []gcCandidate
		total  int
		usage  DiskUsage
		cfg    GCConfig
		want   []string
		reason gcReason
	}{
		{name: "nothing terminal", total: 100, usage: DiskUsage{UsedPercent: 99}, cfg: cfg},
		{name: "under every limit", cands: cands, total: 5, usage: DiskUsage{UsedPercent: 79.9, InodesUsedPercent: 69.9}, cfg: cfg},
		{name: "count: oldest first", cands: cands, total: 7, cfg: cfg, want: []string{"z", "a"}, reason: gcReasonCount},
		{name: "count beyond candidates", cands: cands, total: 50, cfg: cfg, want: []string{"z", "a", "b", "c"}, reason: gcReasonCount},
		{name: "disk at threshold: one", cands: cands, total: 4, usage: DiskUsage{UsedPercent: 80}, cfg: cfg, want: []string{"z"}, reason: gcReasonDisk},
		{name: "inodes above threshold", cands: cands[:3], total: 4, usage: DiskUsage{InodesUsedPercent: 75}, cfg: cfg, want: []string{"a"}, reason: gcReasonInodes},
		{name: "count wins over disk", cands: cands, total: 6, usage: DiskUsage{UsedPercent: 99}, cfg: cfg, want: []string{"z"}, reason: gcReasonCount},
		{name: "ties by ID", cands: []gcCandidate{{ID: "y", FinishedAt: t0}, {ID: "x", FinishedAt: t0}}, total: 2, usage: DiskUsage{UsedPercent: 90}, cfg: cfg, want: []string{"x"}, reason: gcReasonDisk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := selectGC(tt.cands, tt.total, tt.usage, tt.cfg)
			if !slices.Equal(got.IDs, tt.want) || got.Reason != tt.reason {
				t.Errorf("selectGC = %v (%q), want %v (%q)", got.IDs, got.Reason, tt.want, tt.reason)
			}
		})
	}
}

func TestGCConfigDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := GCConfig{}.withDefaults()
		want := GCConfig{Interval: time.Minute, MaxAllocs: 50, DiskUsageThreshold: 80, InodeUsageThreshold: 70}
		if got != want {
			t.Errorf("defaults = %+v, want %+v", got, want)
		}
		set := GCConfig{Interval: time.Second, MaxAllocs: 3, DiskUsageThreshold: 50, InodeUsageThreshold: 40}
		if got := set.withDefaults(); got != set {
			t.Errorf("set fields changed: %+v", got)
		}
	})
}

func TestUsageOf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tests := []struct {
			blocks, bfree, files, ffree uint64
			want                        DiskUsage
		}{
			{100, 25, 10, 5, DiskUsage{UsedPercent: 75, InodesUsedPercent: 50}},
			{100, 100, 0, 0, DiskUsage{}}, // no inode counts (btrfs)
			{0, 0, 0, 0, DiskUsage{}},
			{10, 20, 1, 2, DiskUsage{}}, // free beyond total: never negative
		}
		for _, tt := range tests {
			if got := usageOf(tt.blocks, tt.bfree, tt.files, tt.ffree); got != tt.want {
				t.Errorf("usageOf(%d, %d, %d, %d) = %+v, want %+v", tt.blocks, tt.bfree, tt.files, tt.ffree, got, tt.want)
			}
		}
	})
}

// fakeStatfs reports the usages in turn, then the last one forever.
type fakeStatfs struct {
	mu     sync.Mutex // guards the fields below
	usages []DiskUsage
	calls  int
}

func (f *fakeStatfs) statfs(string) (DiskUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if len(f.usages) == 0 {
		return DiskUsage{}, errors.New("no usage")
	}
	u := f.usages[0]
	if len(f.usages) > 1 {
		f.usages = f.usages[1:]
	}
	return u, nil
}

// gcTestClient starts a client with the GC config, the fake statfs and a
// ticker driven by the returned channel, and runs n allocations.
func gcTestClient(t *testing.T, cfg GCConfig, fs *fakeStatfs, n int) (*testClient, chan time.Time, []*structs.Allocation) {
	t.Helper()
	tc := newTestClient(t, nil, nil, nil, false)
	tc.c.gc = newGCState(cfg)
	tc.c.gc.statfs = fs.statfs
	tick := make(chan time.Time)
	tc.c.gc.ticker = func(time.Duration) (<-chan time.Time, func()) { return tick, func() {} }
	if err := tc.c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.c.Shutdown() })
	tc.srv.wait(t, "registration", func() bool { r, _ := tc.srv.counts(); return r >= 1 })
	var allocs []*structs.Allocation
	for range n {
		a := testJobAlloc(tc.c.NodeID(), map[string]any{})
		tc.srv.putAlloc(a)
		allocs = append(allocs, a)
	}
	for _, a := range allocs {
		tc.srv.wait(t, "alloc running", func() bool {
			st, err := tc.c.AllocState(a.ID)
			return err == nil && st.ClientStatus == structs.AllocClientStatusRunning
		})
	}
	return tc, tick, allocs
}

// finish stops the allocations one after the other, so that they finish
// in that order (in a synctest bubble).
func finish(t *testing.T, tc *testClient, allocs ...*structs.Allocation) {
	t.Helper()
	for _, a := range allocs {
		tc.srv.stopAlloc(a.ID)
		settle(t, "alloc complete", func() bool {
			tc.c.allocMu.RLock()
			ar := tc.c.allocs[a.ID]
			tc.c.allocMu.RUnlock()
			if ar == nil {
				return false
			}
			_, ok := gcCandidateOf(ar)
			return ok
		})
		time.Sleep(time.Millisecond) // (fake time) the next one finishes later
	}
}

// collected reports, per allocation, whether its directory and local state
// are gone. While a collection may be in progress, poll with it; once done,
// check with strict set, which fails on a half-collected allocation.
func collected(t *testing.T, tc *testClient, dirs map[string]string) map[string]bool {
	return collectedState(t, tc, dirs, false)
}

func collectedState(t *testing.T, tc *testClient, dirs map[string]string, strict bool) map[string]bool {
	t.Helper()
	stored, _, err := tc.db.GetAllAllocations()
	if err != nil {
		t.Fatal(err)
	}
	inDB := map[string]bool{}
	for _, a := range stored {
		inDB[a.ID] = true
	}
	out := map[string]bool{}
	for id, dir := range dirs {
		_, statErr := os.Stat(dir)
		gone := errors.Is(statErr, os.ErrNotExist) && !inDB[id]
		if strict && !gone && (statErr != nil || !inDB[id]) {
			t.Errorf("alloc %s half collected: dir stat %v, in state DB %v", id, statErr, inDB[id])
		}
		out[id] = gone
	}
	return out
}

func allocDirs(t *testing.T, tc *testClient, allocs []*structs.Allocation) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, a := range allocs {
		d, err := tc.c.AllocDir(a.ID)
		if err != nil {
			t.Fatal(err)
		}
		dirs[a.ID] = d
	}
	return dirs
}

func TestClientGCByCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := &fakeStatfs{usages: []DiskUsage{{UsedPercent: 10}}}
		tc, tick, allocs := gcTestClient(t, GCConfig{MaxAllocs: 1}, fs, 4)
		dirs := allocDirs(t, tc, allocs)
		// Two finish; two keep running. Over the limit by 3, but only the
		// terminal ones may go.
		finish(t, tc, allocs[0], allocs[1])
		tick <- time.Now()
		settle(t, "collection", func() bool { return collected(t, tc, dirs)[allocs[1].ID] })
		got := collectedState(t, tc, dirs, true)
		want := map[string]bool{allocs[0].ID: true, allocs[1].ID: true, allocs[2].ID: false, allocs[3].ID: false}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("alloc %s collected = %v, want %v", id, got[id], w)
			}
		}
		for _, a := range allocs[2:] {
			if st, err := tc.c.AllocState(a.ID); err != nil || st.ClientStatus != structs.AllocClientStatusRunning {
				t.Errorf("running alloc after GC: %+v, %v", st, err)
			}
		}
		if _, err := tc.c.AllocDir(allocs[0].ID); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("AllocDir of a collected alloc = %v, want not found", err)
		}
	})
}

func TestClientGCByDiskUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 95% then 85%: one collection each; then 50%: done.
		fs := &fakeStatfs{usages: []DiskUsage{{UsedPercent: 95}, {UsedPercent: 85}, {UsedPercent: 50}}}
		tc, tick, allocs := gcTestClient(t, GCConfig{}, fs, 4)
		dirs := allocDirs(t, tc, allocs)
		finish(t, tc, allocs[2], allocs[0], allocs[1]) // oldest first: 2, 0
		tick <- time.Now()
		settle(t, "collection", func() bool { return collected(t, tc, dirs)[allocs[0].ID] })
		// The next tick measures 50% (the last usage): nothing more goes.
		tick <- time.Now()
		settle(t, "third statfs", func() bool {
			fs.mu.Lock()
			defer fs.mu.Unlock()
			return fs.calls >= 4
		})
		got := collectedState(t, tc, dirs, true)
		want := map[string]bool{allocs[2].ID: true, allocs[0].ID: true, allocs[1].ID: false, allocs[3].ID: false}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("alloc %s collected = %v, want %v", id, got[id], w)
			}
		}
	})
}

func TestClientCollectAllGarbage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := &fakeStatfs{usages: []DiskUsage{{}}}
		tc, _, allocs := gcTestClient(t, GCConfig{}, fs, 3)
		dirs := allocDirs(t, tc, allocs)
		if err := tc.c.CollectAlloc(context.Background(), allocs[2].ID); structs.KindOf(err) != structs.KindConflict {
			t.Errorf("CollectAlloc(running) = %v, want conflict", err)
		}
		if err := tc.c.CollectAlloc(context.Background(), "nope"); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("CollectAlloc(unknown) = %v, want not found", err)
		}
		finish(t, tc, allocs[0], allocs[1])
		ids, err := tc.c.CollectAllGarbage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := []string{allocs[0].ID, allocs[1].ID}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("collected %v, want %v", ids, want)
		}
		got := collectedState(t, tc, dirs, true)
		if !got[allocs[0].ID] || !got[allocs[1].ID] || got[allocs[2].ID] {
			t.Errorf("collected = %v", got)
		}
		// Collected allocations stay known: the servers' next update does not
		// run them again.
		tc.srv.putAlloc(tc.srv.alloc(allocs[0].ID))
		ids, err = tc.c.CollectAllGarbage(context.Background())
		if err != nil || len(ids) != 0 {
			t.Errorf("second collection = %v, %v", ids, err)
		}
		if st, err := tc.c.AllocState(allocs[2].ID); err != nil || st.ClientStatus != structs.AllocClientStatusRunning {
			t.Errorf("running alloc after forced GC: %+v, %v", st, err)
		}
	})
}
