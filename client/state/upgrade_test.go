package state

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/structs"
)

// v1Fixture describes the content of a version 1 state file.
type v1Fixture struct {
	allocs map[string][]byte // alloc ID -> raw value
	tasks  map[string][]byte // "<alloc ID>/<task>" -> raw value
	nodeID string
	secret string
}

// writeV1File writes fx in the version 1 layout (see upgrade.go), the way
// the first drover releases did.
func writeV1File(t *testing.T, dataDir string, fx v1Fixture) string {
	t.Helper()
	return writeRawBolt(t, dataDir, func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(metaBucket)
		mustNil(t, err)
		mustNil(t, meta.Put(versionKey, []byte("1")))
		allocs, err := tx.CreateBucket(v1AllocsBucket)
		mustNil(t, err)
		for id, raw := range fx.allocs {
			mustNil(t, allocs.Put([]byte(id), raw))
		}
		tasks, err := tx.CreateBucket(v1TasksBucket)
		mustNil(t, err)
		for k, raw := range fx.tasks {
			mustNil(t, tasks.Put([]byte(k), raw))
		}
		node, err := tx.CreateBucket(nodeBucket)
		mustNil(t, err)
		if fx.nodeID != "" {
			mustNil(t, node.Put(v1NodeIDKey, []byte(fx.nodeID)))
			mustNil(t, node.Put(v1NodeSecret, []byte(fx.secret)))
		}
		return nil
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	mustNil(t, err)
	return b
}

func v1Task(t *testing.T, ls *LocalState, ts *structs.TaskState) []byte {
	return mustJSON(t, map[string]any{"LocalState": ls, "TaskState": ts})
}

func fileVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	mustNil(t, err)
	defer db.Close()
	var v int
	mustNil(t, db.View(func(tx *bolt.Tx) (err error) {
		v, err = readVersion(tx)
		return err
	}))
	return v
}

func TestBoltUpgradesFromV1(t *testing.T) {
	dir := t.TempDir()
	path := writeV1File(t, dir, v1Fixture{
		allocs: map[string][]byte{
			"a1":  mustJSON(t, testAlloc("a1")),
			"a2":  mustJSON(t, testAlloc("a2")),
			"bad": []byte(`{"ID": `),
		},
		tasks: map[string][]byte{
			"a1/web":        v1Task(t, testLocalState(), testTaskState()),
			"a1/sidecar":    v1Task(t, nil, structs.NewTaskState()),
			"a2/web":        v1Task(t, &LocalState{InvocationID: "i2"}, nil),
			"a2/name/slash": v1Task(t, &LocalState{InvocationID: "i3"}, nil),
			"bad/web":       []byte(`not json`),
		},
		nodeID: "n1",
		secret: "s1",
	})

	db := openTestBolt(t, dir)

	allocs, errs, err := db.GetAllAllocations()
	mustNil(t, err)
	if ids := allocIDs(allocs); !reflect.DeepEqual(ids, []string{"a1", "a2"}) {
		t.Errorf("allocs = %v", ids)
	}
	if !reflect.DeepEqual(allocs[0], testAlloc("a1")) {
		t.Errorf("a1 = %+v", allocs[0])
	}
	if errs["bad"] == nil || len(errs) != 1 {
		t.Errorf("errs = %v: want the undecodable alloc reported", errs)
	}
	tasks := []struct {
		alloc, task string
		ls          *LocalState
		ts          *structs.TaskState
	}{
		{"a1", "web", testLocalState(), testTaskState()},
		{"a1", "sidecar", nil, structs.NewTaskState()},
		{"a2", "web", &LocalState{InvocationID: "i2"}, nil},
		{"a2", "name/slash", &LocalState{InvocationID: "i3"}, nil},
	}
	for _, tc := range tasks {
		ls, ts, err := db.GetTaskRunnerState(tc.alloc, tc.task)
		mustNil(t, err)
		if !reflect.DeepEqual(ls, tc.ls) || !reflect.DeepEqual(ts, tc.ts) {
			t.Errorf("%s/%s = %+v %+v, want %+v %+v", tc.alloc, tc.task, ls, ts, tc.ls, tc.ts)
		}
	}
	// The undecodable task value was kept and is reported, not dropped.
	if _, _, err := db.GetTaskRunnerState("bad", "web"); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("undecodable v1 task: err = %v", err)
	}
	if id, err := db.GetNodeIdentity(); err != nil || *id != (NodeIdentity{ID: "n1", SecretID: "s1"}) {
		t.Errorf("identity = %+v, %v", id, err)
	}
	mustNil(t, db.db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{v1AllocsBucket, v1TasksBucket} {
			if tx.Bucket(b) != nil {
				t.Errorf("v1 bucket %q left behind", b)
			}
		}
		if node := tx.Bucket(nodeBucket); node.Get(v1NodeIDKey) != nil || node.Get(v1NodeSecret) != nil {
			t.Error("v1 node keys left behind")
		}
		return nil
	}))
	mustNil(t, db.Close())

	if v := fileVersion(t, path); v != SchemaVersion {
		t.Errorf("version after upgrade = %d", v)
	}
	bak := path + ".v1.bak"
	if v := fileVersion(t, bak); v != 1 {
		t.Errorf("backup version = %d, want 1", v)
	}
	if info, err := os.Stat(bak); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("backup: %v %v", info, err)
	}
	if _, err := os.Stat(bak + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary backup file left: %v", err)
	}

	// The backup is a complete version 1 file: opening a copy of it as a
	// state file upgrades it the same way.
	dir2 := t.TempDir()
	raw, err := os.ReadFile(bak)
	mustNil(t, err)
	mustNil(t, os.MkdirAll(dir2+"/client", 0o700))
	mustNil(t, os.WriteFile(StatePath(dir2), raw, 0o600))
	db2 := openTestBolt(t, dir2)
	got, errs, err := db2.GetAllAllocations()
	mustNil(t, err)
	if ids := allocIDs(got); !reflect.DeepEqual(ids, []string{"a1", "a2"}) || errs["bad"] == nil {
		t.Errorf("allocs from backup = %v, errs %v", ids, errs)
	}

	// Opening the upgraded file again is a no-op.
	db = openTestBolt(t, dir)
	if id, _ := db.GetNodeIdentity(); id.ID != "n1" {
		t.Errorf("identity after reopen = %+v", id)
	}
}

func TestBoltUpgradeIsOneTransaction(t *testing.T) {
	// A v1 file the converter rejects half-way (a nested bucket where the
	// tasks bucket holds only values): nothing of the conversion is kept.
	dir := t.TempDir()
	path := writeV1File(t, dir, v1Fixture{
		allocs: map[string][]byte{"a1": mustJSON(t, testAlloc("a1"))},
		tasks:  map[string][]byte{"a1/web": v1Task(t, nil, testTaskState())},
		nodeID: "n1",
	})
	db, err := bolt.Open(path, 0o600, nil)
	mustNil(t, err)
	mustNil(t, db.Update(func(tx *bolt.Tx) error {
		_, err := tx.Bucket(v1TasksBucket).CreateBucket([]byte("zz-nested"))
		return err
	}))
	mustNil(t, db.Close())

	_, err = openBoltStateDB(dir, nil, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "unchanged") {
		t.Fatalf("open = %v, want an upgrade error naming the file", err)
	}
	if v := fileVersion(t, path); v != 1 {
		t.Errorf("version after failed upgrade = %d, want 1", v)
	}
	ro, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	mustNil(t, err)
	defer ro.Close()
	mustNil(t, ro.View(func(tx *bolt.Tx) error {
		if tx.Bucket(allocationsBucket) != nil {
			t.Error("v2 bucket created by the failed upgrade")
		}
		if tx.Bucket(v1AllocsBucket).Get([]byte("a1")) == nil || tx.Bucket(v1TasksBucket).Get([]byte("a1/web")) == nil {
			t.Error("v1 data lost by the failed upgrade")
		}
		if tx.Bucket(nodeBucket).Get(v1NodeIDKey) == nil {
			t.Error("v1 node id lost by the failed upgrade")
		}
		return nil
	}))
}
