package state

import (
	"reflect"
	"testing"
)

// testDriverPluginStates: put, replace, get (copied out), delete, and
// invalid input.
func testDriverPluginStates(t *testing.T, db StateDB) {
	got, err := db.GetDriverPluginStates()
	mustNil(t, err)
	if len(got) != 0 {
		t.Fatalf("empty db: states = %v, want none", got)
	}
	mustNil(t, db.PutDriverPluginState("a", []byte(`{"pid":1}`)))
	mustNil(t, db.PutDriverPluginState("b", []byte(`{"pid":2}`)))
	mustNil(t, db.PutDriverPluginState("a", []byte(`{"pid":3}`)))
	got, err = db.GetDriverPluginStates()
	mustNil(t, err)
	want := map[string][]byte{"a": []byte(`{"pid":3}`), "b": []byte(`{"pid":2}`)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("states = %q, want %q", got, want)
	}
	got["a"][0] = 'X'
	again, err := db.GetDriverPluginStates()
	mustNil(t, err)
	if string(again["a"]) != `{"pid":3}` {
		t.Fatalf("a returned value was not a copy: %q", again["a"])
	}
	mustNil(t, db.DeleteDriverPluginState("a"))
	mustNil(t, db.DeleteDriverPluginState("never-stored"))
	got, err = db.GetDriverPluginStates()
	mustNil(t, err)
	if _, ok := got["a"]; ok || len(got) != 1 {
		t.Fatalf("after delete: states = %q, want only b", got)
	}
	if err := db.PutDriverPluginState("", []byte(`{}`)); err == nil {
		t.Fatal("put with an empty name: want an error")
	}
}

// TestBoltDriverPluginStatesPersist: plugin states survive a reopen.
func TestBoltDriverPluginStatesPersist(t *testing.T) {
	dir := t.TempDir()
	db, err := NewBoltStateDB(dir, nil)
	mustNil(t, err)
	mustNil(t, db.PutDriverPluginState("mock", []byte(`{"pid":7}`)))
	mustNil(t, db.Close())
	db, err = NewBoltStateDB(dir, nil)
	mustNil(t, err)
	defer db.Close()
	got, err := db.GetDriverPluginStates()
	mustNil(t, err)
	if string(got["mock"]) != `{"pid":7}` {
		t.Fatalf("after reopen: states = %q", got)
	}
}
