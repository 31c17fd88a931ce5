package state

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/structs"
)

// openTestBolt opens a bolt state db in dir with a short lock timeout.
func openTestBolt(t *testing.T, dir string) *BoltStateDB {
	t.Helper()
	db, err := openBoltStateDB(dir, nil, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestBoltPersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	db := openTestBolt(t, dir)

	withConfig := testAlloc("a1")
	withConfig.Job.TaskGroups = []*structs.TaskGroup{{
		Name:  "api",
		Tasks: []*structs.Task{{Name: "web", Driver: "raw_exec", Config: map[string]any{"port": 8080, "ratio": 0.5, "args": []any{"a"}}}},
	}}
	mustNil(t, db.PutAllocation(withConfig))
	mustNil(t, db.PutAllocation(testAlloc("a2")))
	mustNil(t, db.PutTaskState("a1", "web", testTaskState()))
	mustNil(t, db.PutTaskRunnerLocalState("a1", "web", testLocalState()))
	mustNil(t, db.PutTaskRunnerLocalState("a2", "web", &LocalState{InvocationID: "i"}))
	mustNil(t, db.PutNodeIdentity(&NodeIdentity{ID: "n1", SecretID: "s1"}))
	mustNil(t, db.Close())

	db = openTestBolt(t, dir)
	allocs := sortedAllocs(t, db)
	if ids := allocIDs(allocs); !reflect.DeepEqual(ids, []string{"a1", "a2"}) {
		t.Fatalf("ids = %v", ids)
	}
	// Driver config numbers keep their exact text through the round trip.
	cfg := allocs[0].Job.TaskGroups[0].Tasks[0].Config
	gotJSON, _ := json.Marshal(cfg)
	wantJSON, _ := json.Marshal(withConfig.Job.TaskGroups[0].Tasks[0].Config)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("task config = %s, want %s", gotJSON, wantJSON)
	}
	if !reflect.DeepEqual(allocs[1], testAlloc("a2")) {
		t.Errorf("a2 = %+v", allocs[1])
	}
	ls, ts, err := db.GetTaskRunnerState("a1", "web")
	mustNil(t, err)
	if !reflect.DeepEqual(ls, testLocalState()) || !reflect.DeepEqual(ts, testTaskState()) {
		t.Errorf("task a1/web = %+v %+v", ls, ts)
	}
	if ls, ts, _ = db.GetTaskRunnerState("a2", "web"); ls == nil || ls.InvocationID != "i" || ts != nil {
		t.Errorf("task a2/web = %+v %+v", ls, ts)
	}
	if id, _ := db.GetNodeIdentity(); *id != (NodeIdentity{ID: "n1", SecretID: "s1"}) {
		t.Errorf("identity = %+v", id)
	}
}

func TestBoltFileModes(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	db := openTestBolt(t, dataDir)
	if db.Path() != filepath.Join(dataDir, "client", "state.db") {
		t.Errorf("path = %s", db.Path())
	}
	for path, want := range map[string]os.FileMode{
		filepath.Join(dataDir, "client"): 0o700 | os.ModeDir,
		db.Path():                        0o600,
	} {
		info, err := os.Stat(path)
		mustNil(t, err)
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, info.Mode(), want)
		}
	}
}

func writeCount(db *BoltStateDB) int64 {
	stats := db.db.Stats()
	return stats.TxStats.GetWrite()
}

func TestBoltSkipsIdenticalWrites(t *testing.T) {
	db := openTestBolt(t, t.TempDir())
	tests := []struct {
		name string
		put  func() error
	}{
		{"alloc", func() error { return db.PutAllocation(testAlloc("a1")) }},
		{"task state", func() error { return db.PutTaskState("a1", "web", testTaskState()) }},
		{"local state", func() error { return db.PutTaskRunnerLocalState("a1", "web", testLocalState()) }},
		{"node identity", func() error { return db.PutNodeIdentity(&NodeIdentity{ID: "n"}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustNil(t, tc.put())
			before := writeCount(db)
			mustNil(t, tc.put())
			if after := writeCount(db); after != before {
				t.Errorf("identical put wrote %d pages", after-before)
			}
		})
	}
	// A changed value is written.
	before := writeCount(db)
	changed := testTaskState()
	changed.Restarts++
	mustNil(t, db.PutTaskState("a1", "web", changed))
	if writeCount(db) == before {
		t.Error("changed task state was not written")
	}
}

func TestBoltUndecodableValues(t *testing.T) {
	dir := t.TempDir()
	db := openTestBolt(t, dir)
	mustNil(t, db.PutAllocation(testAlloc("good")))
	mustNil(t, db.PutAllocation(testAlloc("bad")))
	mustNil(t, db.PutAllocation(testAlloc("null")))
	mustNil(t, db.PutTaskState("bad", "web", testTaskState()))
	mustNil(t, db.PutNodeIdentity(&NodeIdentity{ID: "n"}))
	// Damage values behind the store's back, as a disk or a bug could.
	mustNil(t, db.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(allocationsBucket)
		mustNil(t, root.Bucket([]byte("bad")).Put(allocKey, []byte(`{"ID": 12`)))
		mustNil(t, root.Bucket([]byte("null")).Put(allocKey, []byte(`null`)))
		mustNil(t, root.Bucket([]byte("bad")).Bucket(taskBucketName("web")).Put(taskStateKey, []byte(`{"State": 1}`)))
		return tx.Bucket(nodeBucket).Put(identityKey, []byte(`{} trailing`))
	}))
	mustNil(t, db.Close())

	db = openTestBolt(t, dir)
	allocs, errs, err := db.GetAllAllocations()
	mustNil(t, err)
	if ids := allocIDs(allocs); !reflect.DeepEqual(ids, []string{"good"}) {
		t.Errorf("decoded allocs = %v", ids)
	}
	if len(errs) != 2 || errs["bad"] == nil || errs["null"] == nil {
		t.Fatalf("errs = %v", errs)
	}
	for id, err := range errs {
		if !strings.Contains(err.Error(), db.Path()) || !strings.Contains(err.Error(), id) {
			t.Errorf("errs[%s] = %v: want the path and the alloc ID", id, err)
		}
	}
	_, _, err = db.GetTaskRunnerState("bad", "web")
	if err == nil || !strings.Contains(err.Error(), db.Path()) || !strings.Contains(err.Error(), `"web"`) {
		t.Errorf("GetTaskRunnerState of undecodable value: %v", err)
	}
	if _, err := db.GetNodeIdentity(); err == nil || !strings.Contains(err.Error(), db.Path()) {
		t.Errorf("GetNodeIdentity of undecodable value: %v", err)
	}
}

func TestBoltLockedFile(t *testing.T) {
	dir := t.TempDir()
	first := openTestBolt(t, dir)
	_, err := openBoltStateDB(dir, nil, 50*time.Millisecond)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: err = %v, want ErrLocked", err)
	}
	want := "state file " + first.Path() + " is locked by another process: is another drover agent running with the same data_dir?"
	if err.Error() != want {
		t.Errorf("error = %q\nwant %q", err, want)
	}
	// The first agent is unaffected.
	mustNil(t, first.PutNodeIdentity(&NodeIdentity{ID: "n"}))
}

func TestBoltCloseIsIdempotentAndWaitsForWriters(t *testing.T) {
	db := openTestBolt(t, t.TempDir())
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			err := db.PutTaskState("a1", "web", &structs.TaskState{Restarts: uint64(i)})
			if err != nil && !errors.Is(err, ErrClosed) {
				t.Errorf("put racing Close: %v", err)
			}
		})
	}
	mustNil(t, db.Close())
	wg.Wait()
	mustNil(t, db.Close())
}
