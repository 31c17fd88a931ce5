package state

import (
	"reflect"
	"testing"
)

// pluginStates are the three calls of one kind of plugin state.
type pluginStates struct {
	get func() (map[string][]byte, error)
	put func(name string, data []byte) error
	del func(name string) error
}

func driverStates(db StateDB) pluginStates {
	return pluginStates{db.GetDriverPluginStates, db.PutDriverPluginState, db.DeleteDriverPluginState}
}

func deviceStates(db StateDB) pluginStates {
	return pluginStates{db.GetDevicePluginStates, db.PutDevicePluginState, db.DeleteDevicePluginState}
}

// testDriverPluginStates: put, replace, get (copied out), delete, and
// invalid input.
func testDriverPluginStates(t *testing.T, db StateDB) { testPluginStates(t, driverStates(db)) }

// testDevicePluginStates: the same for device plugins.
func testDevicePluginStates(t *testing.T, db StateDB) { testPluginStates(t, deviceStates(db)) }

// testPluginKindsApart: a driver and a device plugin of one name have a
// state each.
func testPluginKindsApart(t *testing.T, db StateDB) {
	mustNil(t, db.PutDriverPluginState("x", []byte(`"driver"`)))
	mustNil(t, db.PutDevicePluginState("x", []byte(`"device"`)))
	drv, err := db.GetDriverPluginStates()
	mustNil(t, err)
	dev, err := db.GetDevicePluginStates()
	mustNil(t, err)
	if string(drv["x"]) != `"driver"` || string(dev["x"]) != `"device"` {
		t.Fatalf("driver %q, device %q: the kinds share a state", drv["x"], dev["x"])
	}
	mustNil(t, db.DeleteDevicePluginState("x"))
	drv, err = db.GetDriverPluginStates()
	mustNil(t, err)
	if string(drv["x"]) != `"driver"` {
		t.Fatal("deleting the device state deleted the driver's")
	}
}

func testPluginStates(t *testing.T, db pluginStates) {
	got, err := db.get()
	mustNil(t, err)
	if len(got) != 0 {
		t.Fatalf("empty db: states = %v, want none", got)
	}
	mustNil(t, db.put("a", []byte(`{"pid":1}`)))
	mustNil(t, db.put("b", []byte(`{"pid":2}`)))
	mustNil(t, db.put("a", []byte(`{"pid":3}`)))
	got, err = db.get()
	mustNil(t, err)
	want := map[string][]byte{"a": []byte(`{"pid":3}`), "b": []byte(`{"pid":2}`)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("states = %q, want %q", got, want)
	}
	got["a"][0] = 'X'
	again, err := db.get()
	mustNil(t, err)
	if string(again["a"]) != `{"pid":3}` {
		t.Fatalf("a returned value was not a copy: %q", again["a"])
	}
	mustNil(t, db.del("a"))
	mustNil(t, db.del("never-stored"))
	got, err = db.get()
	mustNil(t, err)
	if _, ok := got["a"]; ok || len(got) != 1 {
		t.Fatalf("after delete: states = %q, want only b", got)
	}
	if err := db.put("", []byte(`{}`)); err == nil {
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

// TestBoltDevicePluginStatesPersist: device plugin states survive a reopen.
func TestBoltDevicePluginStatesPersist(t *testing.T) {
	dir := t.TempDir()
	db, err := NewBoltStateDB(dir, nil)
	mustNil(t, err)
	mustNil(t, db.PutDevicePluginState("fake_device", []byte(`{"pid":8}`)))
	mustNil(t, db.Close())
	db, err = NewBoltStateDB(dir, nil)
	mustNil(t, err)
	defer db.Close()
	got, err := db.GetDevicePluginStates()
	mustNil(t, err)
	if string(got["fake_device"]) != `{"pid":8}` {
		t.Fatalf("after reopen: states = %q", got)
	}
}
