package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// The bbolt state file's layout, schema version 2 (the current one):
//
//	meta/                      bucket
//	  version                  ASCII decimal schema version, "2"
//	allocations/               bucket
//	  <alloc ID>/              bucket, one per allocation
//	    alloc                  JSON structs.Allocation
//	    alloc_runner           JSON AllocRunnerLocalState, written by the
//	                           first put (files written before it lack it)
//	    task-<task name>/      bucket, one per task
//	      local_state          JSON LocalState (its HookState and
//	                           StartIntent fields are absent in files
//	                           written before they existed)
//	      task_state           JSON structs.TaskState
//	node/                      bucket
//	  identity                 JSON NodeIdentity
//	  meta                     JSON object: the node's dynamic metadata,
//	                           a string or null by key (files written
//	                           before it existed lack it)
//	driver_plugins/            bucket, created by the first put (files
//	                           written before it existed lack it)
//	  <plugin name>            the plugin's state, opaque JSON
//	device_plugins/            bucket, the same for device plugins
//	  <plugin name>            the plugin's state, opaque JSON
//
// meta/version is where every schema version, past and future, keeps its
// number, so that any drover can tell which layout a file has. Values are
// JSON (debuggable with any bbolt browser); a nil pointer is stored as
// JSON null and a nil slice or map as null, an empty one as [] or {}, so
// "unset" and "zero" survive a round trip. Version 1 is described in
// upgrade.go.
const (
	// SchemaVersion is the state file schema version this drover writes.
	SchemaVersion = 2

	stateDirName  = "client"
	stateFileName = "state.db"
)

var (
	metaBucket        = []byte("meta")
	versionKey        = []byte("version")
	allocationsBucket = []byte("allocations")
	allocKey          = []byte("alloc")
	allocRunnerKey    = []byte("alloc_runner")
	taskBucketPrefix  = "task-"
	localStateKey     = []byte("local_state")
	taskStateKey      = []byte("task_state")
	nodeBucket        = []byte("node")
	identityKey       = []byte("identity")
	nodeMetaKey       = []byte("meta")
	driverPluginsBkt  = []byte("driver_plugins")
	devicePluginsBkt  = []byte("device_plugins")
)

// taskBucketName is the name of a task's bucket inside its alloc bucket.
func taskBucketName(taskName string) []byte {
	return []byte(taskBucketPrefix + taskName)
}

// readVersion returns the file's schema version; 0 when the file holds no
// buckets at all (a new file). A file with buckets but no version, or a
// version that is not a number, is corrupt.
func readVersion(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		empty := true
		err := tx.ForEach(func([]byte, *bolt.Bucket) error {
			empty = false
			return nil
		})
		if err != nil {
			return 0, err
		}
		if empty {
			return 0, nil
		}
		return 0, errors.New("it has data but no meta/version: not a drover state file")
	}
	raw := meta.Get(versionKey)
	if raw == nil {
		return 0, errors.New("meta bucket has no version")
	}
	v, err := strconv.ParseUint(string(raw), 10, 31)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("schema version %q is not a positive number", raw)
	}
	return int(v), nil
}

// initSchema creates the current layout in an empty file.
func initSchema(tx *bolt.Tx) error {
	for _, name := range [][]byte{metaBucket, allocationsBucket, nodeBucket} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %q: %w", name, err)
		}
	}
	return tx.Bucket(metaBucket).Put(versionKey, []byte(strconv.Itoa(SchemaVersion)))
}

// checkSchema verifies that a current-version file has its top-level
// buckets; their absence means the file is damaged.
func checkSchema(tx *bolt.Tx) error {
	for _, name := range [][]byte{allocationsBucket, nodeBucket} {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("bucket %q is missing", name)
		}
	}
	return nil
}

// encodeValue encodes a stored value.
func encodeValue(v any) ([]byte, error) {
	if ls, ok := v.(*LocalState); ok {
		v = normalizeLocalState(ls)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}

// decodeValue decodes a stored value into out. Numbers in untyped values
// (a task's driver config) keep their exact text; trailing data is an
// error.
func decodeValue(data []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("undecodable value: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("undecodable value: trailing data after the JSON value")
	}
	return nil
}

// decodeLocalState decodes a LocalState, restoring a nil RawConfig that
// JSON can only carry as the literal null.
func decodeLocalState(data []byte) (*LocalState, error) {
	var ls *LocalState
	if err := decodeValue(data, &ls); err != nil {
		return nil, err
	}
	if ls == nil {
		return nil, nil
	}
	for _, cfg := range ls.configs() {
		if bytes.Equal(cfg.RawConfig, []byte("null")) {
			cfg.RawConfig = nil
		}
	}
	return ls, nil
}

// configs returns the task configs ls holds: its handle's and its start
// intent's.
func (s *LocalState) configs() []*drivers.TaskConfig {
	var out []*drivers.TaskConfig
	if s.TaskHandle != nil && s.TaskHandle.Config != nil {
		out = append(out, s.TaskHandle.Config)
	}
	if s.StartIntent != nil {
		out = append(out, s.StartIntent)
	}
	return out
}

// normalizeLocalState returns ls, or a copy of it whose empty (non-nil)
// RawConfigs are nil: an empty document is not JSON and means "no config".
func normalizeLocalState(ls *LocalState) *LocalState {
	if ls == nil {
		return ls
	}
	empty := func(cfg *drivers.TaskConfig) bool { return cfg.RawConfig != nil && len(cfg.RawConfig) == 0 }
	if !slices.ContainsFunc(ls.configs(), empty) {
		return ls
	}
	c := ls.Copy()
	for _, cfg := range c.configs() {
		if empty(cfg) {
			cfg.RawConfig = nil
		}
	}
	return c
}

func decodeTaskState(data []byte) (*structs.TaskState, error) {
	var ts *structs.TaskState
	if err := decodeValue(data, &ts); err != nil {
		return nil, err
	}
	return ts, nil
}
