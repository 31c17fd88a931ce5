package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

func encVar(ns, path, key string, data string) *structs.VariableEncrypted {
	return &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: ns, Path: path, CreateTime: 1, ModifyTime: 1},
		KeyID:            key, Data: []byte(data),
	}
}

func u64(v uint64) *uint64 { return &v }

// setVar commits a SetVariable at index and returns whether it applied.
func setVar(t *testing.T, s *StateStore, index uint64, v *structs.VariableEncrypted, check *uint64) bool {
	t.Helper()
	var ok bool
	if err := s.Batch(index, func(w *WriteTxn) error {
		var err error
		ok, err = w.SetVariable(v, check, "")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestSetVariableCAS(t *testing.T) {
	s := newStore(t)
	if !setVar(t, s, 10, encVar("default", "a/b", "k1", "x"), u64(0)) {
		t.Fatal("create with cas=0 did not apply")
	}
	v, err := s.VariableByPath(nil, "default", "a/b")
	if err != nil || v == nil || v.CreateIndex != 10 || v.ModifyIndex != 10 {
		t.Fatalf("stored %+v, %v", v, err)
	}
	for _, tc := range []struct {
		name  string
		check *uint64
		want  bool
	}{
		{"create over existing", u64(0), false},
		{"stale index", u64(9), false},
		{"current index", u64(10), true},
		{"no check", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := s.VariableByPath(nil, "default", "a/b")
			nv := encVar("default", "a/b", "k1", "y")
			nv.CreateTime = 99
			idx := before.ModifyIndex + 1
			if got := setVar(t, s, idx, nv, tc.check); got != tc.want {
				t.Fatalf("applied = %v, want %v", got, tc.want)
			}
			after, _ := s.VariableByPath(nil, "default", "a/b")
			if !tc.want {
				if after != before {
					t.Fatal("a refused CAS changed the variable")
				}
				return
			}
			if after.ModifyIndex != idx || after.CreateIndex != 10 || after.CreateTime != 1 {
				t.Fatalf("updated %+v", after)
			}
		})
	}
	// cas>0 on a missing variable does not create it.
	if setVar(t, s, 50, encVar("default", "missing", "k1", "x"), u64(3)) {
		t.Fatal("cas=3 created a variable")
	}
}

func TestDeleteVariableAndList(t *testing.T) {
	s := newStore(t)
	for i, p := range []string{"app/a", "app/b", "other"} {
		setVar(t, s, uint64(10+i), encVar("default", p, "k1", "x"), nil)
	}
	setVar(t, s, 20, encVar("prod", "app/a", "k2", "x"), nil)

	list := func(ns, prefix string) []string {
		vs, err := s.Variables(nil, ns, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range vs {
			out = append(out, v.Namespace+":"+v.Path)
		}
		return out
	}
	if got := list("default", "app/"); len(got) != 2 || got[0] != "default:app/a" {
		t.Fatalf("list = %v", got)
	}
	if got := list("*", "app/a"); len(got) != 2 || got[1] != "prod:app/a" {
		t.Fatalf("list * = %v", got)
	}
	if vs, _ := s.VariablesByKeyID(nil, "k2"); len(vs) != 1 {
		t.Fatalf("by key = %d", len(vs))
	}

	ws := memdb.NewWatchSet()
	if _, err := s.VariableByPath(ws, "default", "app/a"); err != nil {
		t.Fatal(err)
	}
	var ok bool
	del := func(index uint64, path string, check *uint64) bool {
		if err := s.Batch(index, func(w *WriteTxn) error {
			var err error
			ok, err = w.DeleteVariable("default", path, check, "")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if del(30, "app/a", u64(9)) {
		t.Fatal("stale delete applied")
	}
	if fired(ws) {
		t.Fatal("a refused delete fired the watch")
	}
	if !del(31, "app/a", u64(10)) || !fired(ws) {
		t.Fatal("delete at the current index did not apply or did not fire")
	}
	if !del(32, "never", nil) || del(33, "never", u64(4)) {
		t.Fatal("deleting a missing variable: want ok without check, conflict with cas>0")
	}
	if got := s.Index(TableVariables); got != 31 {
		t.Fatalf("table index = %d, want 31 (the no-op deletes change nothing)", got)
	}
}

func TestRekeyVariablesKeepsNewerWrites(t *testing.T) {
	s := newStore(t)
	setVar(t, s, 10, encVar("default", "a", "old", "x"), nil)
	setVar(t, s, 11, encVar("default", "b", "old", "x"), nil)
	// b was written again (with the new key) after the rekey read it.
	stale := encVar("default", "b", "new", "rekeyed")
	stale.ModifyIndex = 11
	setVar(t, s, 12, encVar("default", "b", "new", "fresh"), nil)
	fresh := encVar("default", "a", "new", "rekeyed")
	fresh.ModifyIndex = 10
	var n int
	if err := s.Batch(13, func(w *WriteTxn) error {
		var err error
		n, err = w.RekeyVariables([]*structs.VariableEncrypted{fresh, stale})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	a, _ := s.VariableByPath(nil, "default", "a")
	b, _ := s.VariableByPath(nil, "default", "b")
	if n != 1 || a.KeyID != "new" || string(a.Data) != "rekeyed" || a.ModifyIndex != 10 || string(b.Data) != "fresh" {
		t.Fatalf("n=%d a=%+v b=%+v", n, a, b)
	}
}

func TestRootKeys(t *testing.T) {
	s := newStore(t)
	add := func(index uint64, id, prev string) bool {
		var ok bool
		if err := s.Batch(index, func(w *WriteTxn) error {
			var err error
			ok, err = w.AddRootKey(&structs.RootKey{RootKeyMeta: structs.RootKeyMeta{KeyID: id}}, prev)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !add(1, "k1", "") || add(2, "k2", "") || !add(3, "k2", "k1") {
		t.Fatal("CAS on the active key: want the first and the third to apply")
	}
	keys, _ := s.RootKeys(nil)
	if len(keys) != 2 || keys[0].State != structs.RootKeyStateInactive || keys[1].State != structs.RootKeyStateActive {
		t.Fatalf("keys = %+v %+v", keys[0], keys[1])
	}
	if a, _ := s.ActiveRootKey(nil); a.KeyID != "k2" {
		t.Fatalf("active = %s", a.KeyID)
	}
	setVar(t, s, 4, encVar("default", "a", "k1", "x"), nil)
	del := func(index uint64, id string, force bool) (int, error) {
		var n int
		err := s.Batch(index, func(w *WriteTxn) error {
			var err error
			n, err = w.DeleteRootKey(id, force)
			return err
		})
		return n, err
	}
	if _, err := del(5, "k2", true); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("deleting the active key: %v", err)
	}
	if n, err := del(6, "k1", false); err != nil || n != 1 {
		t.Fatalf("deleting a key in use: n=%d err=%v", n, err)
	}
	if n, err := del(7, "k1", true); err != nil || n != 0 {
		t.Fatalf("forced delete: n=%d err=%v", n, err)
	}
	if _, err := del(8, "k1", true); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("deleting a missing key: %v", err)
	}
}

func TestVariableLocks(t *testing.T) {
	s := newStore(t)
	setVar(t, s, 10, encVar("default", "l", "k1", "v1"), nil)
	run := func(index uint64, fn func(w *WriteTxn) (bool, error)) bool {
		var ok bool
		if err := s.Batch(index, func(w *WriteTxn) error {
			var err error
			ok, err = fn(w)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	lock := &structs.VariableLock{ID: "L1", TTL: "15s"}
	if !run(11, func(w *WriteTxn) (bool, error) { return w.AcquireVariableLock("default", "l", lock, nil) }) {
		t.Fatal("acquire on an unlocked variable failed")
	}
	v, _ := s.VariableByPath(nil, "default", "l")
	if v.Lock == nil || v.Lock.ID != "L1" || string(v.Data) != "v1" || v.ModifyIndex != 11 || v.CreateIndex != 10 {
		t.Fatalf("locked = %+v", v)
	}
	for _, tc := range []struct {
		name string
		fn   func(w *WriteTxn) (bool, error)
		want bool
	}{
		{"second acquire", func(w *WriteTxn) (bool, error) {
			return w.AcquireVariableLock("default", "l", &structs.VariableLock{ID: "L2"}, nil)
		}, false},
		{"write without the lock", func(w *WriteTxn) (bool, error) { return w.SetVariable(encVar("default", "l", "k1", "x"), nil, "") }, false},
		{"write with another lock", func(w *WriteTxn) (bool, error) { return w.SetVariable(encVar("default", "l", "k1", "x"), nil, "L2") }, false},
		{"delete without the lock", func(w *WriteTxn) (bool, error) { return w.DeleteVariable("default", "l", nil, "") }, false},
		{"release by another", func(w *WriteTxn) (bool, error) { return w.ReleaseVariableLock("default", "l", "L2") }, false},
		{"write by the holder", func(w *WriteTxn) (bool, error) { return w.SetVariable(encVar("default", "l", "k1", "v2"), nil, "L1") }, true},
		{"release by the holder", func(w *WriteTxn) (bool, error) { return w.ReleaseVariableLock("default", "l", "L1") }, true},
		{"release again", func(w *WriteTxn) (bool, error) { return w.ReleaseVariableLock("default", "l", "L1") }, false},
		{"acquire a missing variable without content", func(w *WriteTxn) (bool, error) {
			return w.AcquireVariableLock("default", "new", &structs.VariableLock{ID: "L3"}, nil)
		}, false},
		{"acquire a missing variable with content", func(w *WriteTxn) (bool, error) {
			return w.AcquireVariableLock("default", "new", &structs.VariableLock{ID: "L3"}, encVar("", "", "k1", "{}"))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := s.Index(TableVariables) + 1
			if got := run(idx, tc.fn); got != tc.want {
				t.Fatalf("ok = %v, want %v", got, tc.want)
			}
		})
	}
	v, _ = s.VariableByPath(nil, "default", "l")
	if v.Lock != nil || string(v.Data) != "v2" {
		t.Fatalf("after release: %+v", v)
	}
	n, _ := s.VariableByPath(nil, "default", "new")
	if n == nil || n.Lock == nil || n.Lock.ID != "L3" || n.Path != "new" {
		t.Fatalf("new locked variable: %+v", n)
	}
}
