package state

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func strPtr(s string) *string { return &s }

func testNodeMeta(t *testing.T, db StateDB) {
	got, err := db.GetNodeMeta()
	if err != nil || got != nil {
		t.Fatalf("meta before any put = %v, %v; want nil", got, err)
	}
	in := map[string]*string{"rack": strPtr("r1"), "gone": nil}
	mustNil(t, db.PutNodeMeta(in))
	// The caller's map and values stay the caller's.
	*in["rack"] = "changed"
	in["new"] = strPtr("x")
	want := map[string]*string{"rack": strPtr("r1"), "gone": nil}
	got, err = db.GetNodeMeta()
	mustNil(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("meta = %v, want %v", got, want)
	}
	// A null value (an unset key) is kept, not dropped.
	if v, ok := got["gone"]; !ok || v != nil {
		t.Fatalf("meta[gone] = %v, %v; want a nil value", v, ok)
	}
	*got["rack"] = "changed"
	if again, _ := db.GetNodeMeta(); *again["rack"] != "r1" {
		t.Fatalf("stored meta changed through the returned value: %v", again)
	}
	// A put replaces the whole map; an empty one is not nil.
	mustNil(t, db.PutNodeMeta(map[string]*string{}))
	if got, _ = db.GetNodeMeta(); got == nil || len(got) != 0 {
		t.Fatalf("meta after empty put = %#v", got)
	}
}

func TestBoltNodeMetaPersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	db := openTestBolt(t, dir)
	mustNil(t, db.PutNodeMeta(map[string]*string{"rack": strPtr("r1"), "gone": nil}))
	mustNil(t, db.Close())

	db = openTestBolt(t, dir)
	got, err := db.GetNodeMeta()
	mustNil(t, err)
	if want := map[string]*string{"rack": strPtr("r1"), "gone": nil}; !reflect.DeepEqual(got, want) {
		t.Fatalf("meta after reopen = %v, want %v", got, want)
	}
}

// TestBoltNodeMetaUndecodable: a damaged entry is reported as a corrupt
// state file naming the entry, and left as it was.
func TestBoltNodeMetaUndecodable(t *testing.T) {
	for name, raw := range map[string]string{
		"truncated":  `{"rack": "r`,
		"not object": `["rack"]`,
		"number":     `{"rack": 1}`,
		"trailing":   `{} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			db := openTestBolt(t, dir)
			mustNil(t, db.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(nodeBucket).Put(nodeMetaKey, []byte(raw))
			}))
			_, err := db.GetNodeMeta()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), db.Path()) || !strings.Contains(err.Error(), "node/meta") {
				t.Fatalf("GetNodeMeta of %s: %v; want ErrCorrupt naming the file and node/meta", raw, err)
			}
			mustNil(t, db.db.View(func(tx *bolt.Tx) error {
				if got := string(tx.Bucket(nodeBucket).Get(nodeMetaKey)); got != raw {
					t.Errorf("entry = %q, want it untouched (%q)", got, raw)
				}
				return nil
			}))
		})
	}
}
