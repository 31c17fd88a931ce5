package state

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/structs"
)

// Where FuzzStoredValues plants its input.
const (
	plantAlloc = iota
	plantAllocRunner
	plantLocalState
	plantTaskState
	plantIdentity
	plantV1Task // a version 1 task value, upgraded to version 2
	plantKinds
)

// plant replaces the file's content with one allocation "a1" whose value
// at kind is data (as a corrupt or hostile file would hold it).
func plant(db *BoltStateDB, kind int, data []byte) error {
	return db.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{allocationsBucket, nodeBucket, v1TasksBucket} {
			if tx.Bucket(name) != nil {
				if err := tx.DeleteBucket(name); err != nil {
					return err
				}
			}
		}
		node, err := tx.CreateBucket(nodeBucket)
		if err != nil {
			return err
		}
		if kind == plantV1Task {
			old, err := tx.CreateBucket(v1TasksBucket)
			if err != nil {
				return err
			}
			if err := old.Put([]byte("a1/t"), data); err != nil {
				return err
			}
			_, _, err = convertV1(tx)
			return err
		}
		root, err := tx.CreateBucket(allocationsBucket)
		if err != nil {
			return err
		}
		ab, err := root.CreateBucket([]byte("a1"))
		if err != nil {
			return err
		}
		tb, err := ab.CreateBucket(taskBucketName("t"))
		if err != nil {
			return err
		}
		switch kind {
		case plantAlloc:
			return ab.Put(allocKey, data)
		case plantAllocRunner:
			return ab.Put(allocRunnerKey, data)
		case plantLocalState:
			return tb.Put(localStateKey, data)
		case plantTaskState:
			return tb.Put(taskStateKey, data)
		default:
			return node.Put(identityKey, data)
		}
	})
}

// readAll reads back everything a restarting agent reads.
func readAll(db *BoltStateDB) {
	_, _, _ = db.GetAllAllocations()
	_, _ = db.GetAllocRunnerState("a1")
	_, _, _ = db.GetTaskRunnerState("a1", "t")
	_, _ = db.GetNodeIdentity()
	_, _ = db.GetDriverPluginStates()
}

// fuzzSeeds are stored values of every kind, valid ones and deep, wide
// and huge ones.
func fuzzSeeds(f *testing.F) map[int][][]byte {
	enc := func(v any) []byte {
		b, err := encodeValue(v)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	alloc := testAlloc("a1")
	alloc.Job.TaskGroups = []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec",
		Config: map[string]any{"command": "/bin/true", "args": []any{"a", 1.5}}}}}}
	ls := &LocalState{InvocationID: "abc123", HookState: map[string]*HookState{"logmon": {Data: map[string]string{"a": "1"}, Done: true}}}
	ts := &structs.TaskState{State: structs.TaskStateRunning, Events: []*structs.TaskEvent{{Type: "Started", Time: time.Unix(5, 0).UnixNano()}}}
	deep := strings.Repeat(`{"a":`, 12000) + "1" + strings.Repeat("}", 12000) // deeper than encoding/json reads
	wide := `{"ID": "a1", "Job": {"Meta": {` + strings.TrimSuffix(strings.Repeat(`"k": "v",`, 20000), ",") + `}}}`
	huge := `{"ID": "` + strings.Repeat("x", 1<<20) + `"}`
	return map[int][][]byte{
		plantAlloc:       {enc(alloc), []byte("null"), []byte(`{"ID": 1}`), []byte(deep), []byte(wide), []byte(huge)},
		plantAllocRunner: {enc(&AllocRunnerLocalState{}), []byte(`{"DeploymentStatus": [`)},
		plantLocalState:  {enc(ls), []byte(`{"TaskHandle": {"Config": {"RawConfig": null}}}`), []byte(`{"TaskHandle": {"Config": {"RawConfig": ` + deep + `}}}`)},
		plantTaskState:   {enc(ts), []byte(`{"Events": [null, null]}`)},
		plantIdentity:    {enc(&NodeIdentity{ID: "n1", SecretID: "s"}), []byte(`"not an object"`)},
		plantV1Task:      {[]byte(fmt.Sprintf(`{"LocalState": %s, "TaskState": %s}`, enc(ls), enc(ts))), []byte(`{"LocalState": ` + deep + `}`), []byte("garbage")},
	}
}

// FuzzStoredValues plants arbitrary bytes as each value of the state file
// (as a corrupt or hostile file would hold them) and reads the state back
// as a restarting agent does: each read returns its value or an error;
// none panics, and none allocates more than the value's size warrants.
func FuzzStoredValues(f *testing.F) {
	for kind, values := range fuzzSeeds(f) {
		for _, v := range values {
			f.Add(uint8(kind), v)
		}
	}
	db, err := openBoltStateDB(f.TempDir(), nil, time.Second)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = db.Close() })
	db.db.NoSync = true // a scratch file: no need to survive a crash
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		if err := plant(db, int(kind%plantKinds), data); err != nil {
			t.Fatalf("plant: %v", err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		readAll(db)
		runtime.ReadMemStats(&after)
		if got, bound := after.TotalAlloc-before.TotalAlloc, 16<<20+64*uint64(len(data)); got > bound {
			t.Fatalf("reading a %d-byte value allocated %d bytes, more than %d", len(data), got, bound)
		}
	})
}
