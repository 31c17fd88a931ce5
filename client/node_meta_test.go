package client

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

func strPtr(s string) *string { return &s }

// newMetaClient returns a client on db with the static meta rack=r1,
// not started.
func newMetaClient(t *testing.T, srv *fakeServer, db state.StateDB) (*Client, error) {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	c, err := New(&Config{
		RPC:      srv,
		Drivers:  map[string]drivers.DriverPlugin{mock.Name: driver},
		StateDB:  db,
		AllocDir: t.TempDir(),
		NodeName: "test-node",
		Meta:     map[string]string{"rack": "r1", "connect.log_level": "debug"},
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = c.Shutdown() })
	c.updateInterval = time.Millisecond
	return c, nil
}

func openBolt(t *testing.T, dir string) *state.BoltStateDB {
	t.Helper()
	db, err := state.NewBoltStateDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// wantStatic is the static meta of newMetaClient: the defaults under the
// configured keys.
func wantStatic() map[string]string {
	m := defaultNodeMeta()
	m["rack"] = "r1"
	m["connect.log_level"] = "debug"
	return m
}

func TestNodeMetaDefaultsAndStatic(t *testing.T) {
	c, err := newMetaClient(t, newFakeServer(), state.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	got := c.NodeMeta()
	if !reflect.DeepEqual(got.Static, wantStatic()) || !reflect.DeepEqual(got.Meta, wantStatic()) || len(got.Dynamic) != 0 {
		t.Fatalf("meta = %+v", got)
	}
	if node := c.Node(); !reflect.DeepEqual(node.Meta, wantStatic()) {
		t.Fatalf("node meta = %v", node.Meta)
	}
}

// TestNodeMetaApply: a value sets a key, a dynamic value shadows a static
// one, nil unsets a key (a static one too, until set again), and the
// node's Meta follows.
func TestNodeMetaApply(t *testing.T) {
	c, err := newMetaClient(t, newFakeServer(), state.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name        string
		changes     map[string]*string
		wantDynamic map[string]*string
		set         map[string]string // merged keys that differ from static
		unset       []string          // keys absent from the merge
	}{
		{"set new key", map[string]*string{"foo": strPtr("bar")},
			map[string]*string{"foo": strPtr("bar")}, map[string]string{"foo": "bar"}, nil},
		{"shadow static and unset static", map[string]*string{"rack": strPtr("r2"), "connect.log_level": nil},
			map[string]*string{"foo": strPtr("bar"), "rack": strPtr("r2"), "connect.log_level": nil},
			map[string]string{"foo": "bar", "rack": "r2"}, []string{"connect.log_level"}},
		{"unset dynamic, set static again", map[string]*string{"foo": nil, "connect.log_level": strPtr("trace")},
			map[string]*string{"foo": nil, "rack": strPtr("r2"), "connect.log_level": strPtr("trace")},
			map[string]string{"rack": "r2", "connect.log_level": "trace"}, []string{"foo"}},
	}
	for _, st := range steps {
		got, err := c.ApplyNodeMeta(st.changes)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		want := wantStatic()
		maps.Copy(want, st.set)
		for _, k := range st.unset {
			delete(want, k)
		}
		if !reflect.DeepEqual(got.Dynamic, st.wantDynamic) || !reflect.DeepEqual(got.Meta, want) || !reflect.DeepEqual(got.Static, wantStatic()) {
			t.Fatalf("%s: meta = %+v\nwant merged %v", st.name, got, want)
		}
		if node := c.Node(); !reflect.DeepEqual(node.Meta, want) {
			t.Fatalf("%s: node meta = %v, want %v", st.name, node.Meta, want)
		}
		if read := c.NodeMeta(); !reflect.DeepEqual(read, got) {
			t.Fatalf("%s: read = %+v, apply returned %+v", st.name, read, got)
		}
	}
}

func TestNodeMetaApplyRefusesBadInput(t *testing.T) {
	c, err := newMetaClient(t, newFakeServer(), state.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	for name, changes := range map[string]map[string]*string{
		"none":        nil,
		"empty key":   {"": strPtr("x")},
		"bad key":     {"ok": strPtr("x"), "not ok": strPtr("y")},
		"bad part":    {"a..b": nil},
		"interpolate": {"${x}": strPtr("y")},
	} {
		if _, err := c.ApplyNodeMeta(changes); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}
	if got := c.NodeMeta(); got.Dynamic != nil || !reflect.DeepEqual(got.Meta, wantStatic()) {
		t.Fatalf("refused changes changed the meta: %+v", got)
	}
}

// TestNodeMetaPersistsAcrossRestart: the dynamic meta is in the state
// file, and a restarted client's node has it.
func TestNodeMetaPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	c, err := newMetaClient(t, newFakeServer(), openBolt(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApplyNodeMeta(map[string]*string{"foo": strPtr("bar"), "rack": nil}); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(); err != nil {
		t.Fatal(err)
	}

	c2, err := newMetaClient(t, newFakeServer(), openBolt(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	got := c2.NodeMeta()
	want := wantStatic()
	want["foo"] = "bar"
	delete(want, "rack")
	if !reflect.DeepEqual(got.Dynamic, map[string]*string{"foo": strPtr("bar"), "rack": nil}) || !reflect.DeepEqual(got.Meta, want) {
		t.Fatalf("meta after restart = %+v", got)
	}
	if node := c2.Node(); !reflect.DeepEqual(node.Meta, want) {
		t.Fatalf("node meta after restart = %v, want %v", node.Meta, want)
	}
}

// TestNodeMetaCorruptEntryStopsClient: an undecodable stored meta stops
// New with an error naming the file and the entry, and the entry is kept.
func TestNodeMetaCorruptEntryStopsClient(t *testing.T) {
	dir := t.TempDir()
	db := openBolt(t, dir)
	if err := db.PutNodeMeta(map[string]*string{"foo": strPtr("bar")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	const bad = `{"foo": 12`
	setRaw := func(tx *bolt.Tx) error { return tx.Bucket([]byte("node")).Put([]byte("meta"), []byte(bad)) }
	raw, err := bolt.Open(state.StatePath(dir), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Update(setRaw); err != nil {
		t.Fatal(err)
	}
	_ = raw.Close()

	db = openBolt(t, dir)
	_, err = newMetaClient(t, newFakeServer(), db)
	// A New that fails leaves the StateDB to its caller (the agent).
	_ = db.Close()
	if !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), state.StatePath(dir)) ||
		!strings.Contains(err.Error(), "dynamic metadata") {
		t.Fatalf("New with a corrupt meta entry: %v", err)
	}
	t.Logf("New: %v", err)
	raw, err = bolt.Open(state.StatePath(dir), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.View(func(tx *bolt.Tx) error {
		if got := string(tx.Bucket([]byte("node")).Get([]byte("meta"))); got != bad {
			t.Errorf("entry = %q, want it kept", got)
		}
		return nil
	})
}

// TestNodeMetaApplyUpdatesServers: an apply sends the node with its new
// Meta to the servers (re-registering it).
func TestNodeMetaApplyUpdatesServers(t *testing.T) {
	srv := newFakeServer()
	c, err := newMetaClient(t, srv, state.NewMemDB())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	<-c.registered
	if _, err := c.ApplyNodeMeta(map[string]*string{"foo": strPtr("bar"), "rack": nil}); err != nil {
		t.Fatal(err)
	}
	// The fake closes changed at every registration: wait for the one
	// that carries the new meta.
	timeout := time.After(time.Minute) // a bound for a loaded machine, not a wait
	for {
		srv.mu.Lock()
		node := srv.nodes[c.NodeID()]
		changed := srv.changed
		srv.mu.Unlock()
		if node != nil && node.Meta["foo"] == "bar" {
			if _, ok := node.Meta["rack"]; ok {
				t.Fatalf("servers' node meta = %v: rack was unset", node.Meta)
			}
			break
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the servers never got the new meta: %v", node.Meta)
		}
	}
	if err := c.Shutdown(); err != nil {
		t.Fatal(err)
	}
}
