// Package state persists the node agent's local state: the allocations it
// runs, each AllocRunner's own state (AllocRunnerLocalState: its
// deployment health verdict and whether the previous allocation's wait
// and data migration completed), each TaskRunner's local state (the
// driver's TaskHandle, used to re-attach to a task after an agent restart,
// and its hooks' saved states, HookState), each task's TaskState, the
// node's identity, and the re-attach state of external driver and device
// plugins.
//
// Where it sits in the data flow: client.Client saves the node identity and
// every allocation it receives; AllocRunners and TaskRunners save their
// runtime state as it changes; a restarted agent reads it all back to
// restore its runners. StateDB is the interface; MemDB is the in-memory
// implementation used by tests and -dev mode; BoltStateDB, a bbolt file
// (layout in schema.go, upgrades from older layouts in upgrade.go), backs a
// real agent's data_dir. Values added to the current schema version
// (alloc runner state, hook states) are optional: files written before
// them read as "none stored".
//
// Values put and got are copies: a caller may keep or change what it passed
// or received without affecting what is stored.
package state
