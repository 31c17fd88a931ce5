// Package state persists the node agent's local state: the allocations it
// runs, each AllocRunner's own state (AllocRunnerLocalState: its
// deployment health verdict and whether the previous allocation's wait
// and data migration completed), each TaskRunner's local state (the
// driver's TaskHandle, used to re-attach to a task after an agent restart,
// its hooks' saved states, HookState, and the start intent written before
// each StartTask, StartIntent), each task's TaskState, the node's
// identity, and the re-attach state of external driver and device
// plugins. Every Put is durable when it returns: a start intent is on disk
// before the task is started. BoltStateDB group-commits concurrent Puts
// (groupcommit.go): a Put that finds no commit running commits at once, and
// those arriving during a commit share the next transaction and its fsync,
// so a burst of starting tasks costs a few fsyncs instead of one each,
// and still no Put returns before its write is synced.
//
// Where it sits in the data flow: client.Client saves the node identity and
// every allocation it receives; AllocRunners and TaskRunners save their
// runtime state as it changes; a restarted agent reads it all back to
// restore its runners. StateDB is the interface; MemDB is the in-memory
// implementation used by tests and -dev mode; BoltStateDB, a bbolt file
// (layout in schema.go, upgrades from older layouts in upgrade.go), backs a
// real agent's data_dir. Values added to the current schema version
// (alloc runner state, hook states, start intents) are optional: files
// written before them read as "none stored". A file that cannot be used
// stops the agent with an error naming it (ErrCorrupt, ErrSchemaTooNew,
// ErrLocked); a file of zero bytes is a new node's only when the alloc dir
// holds no allocation directory (WithAllocDir), else ErrCorrupt.
//
// Values put and got are copies: a caller may keep or change what it passed
// or received without affecting what is stored.
package state
