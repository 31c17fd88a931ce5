// Package state persists the node agent's local state: the allocations it
// runs, each TaskRunner's local state (the driver's TaskHandle, used to
// re-attach to a task after an agent restart), each task's TaskState, and
// the node's identity.
//
// Where it sits in the data flow: client.Client saves the node identity and
// every allocation it receives; AllocRunners and TaskRunners save their
// runtime state as it changes; a restarted agent reads it all back to
// restore its runners. StateDB is the interface; MemDB is the in-memory
// implementation used by tests and -dev mode (a bbolt implementation backs
// a real agent's data_dir).
//
// Values put and got are copies: a caller may keep or change what it passed
// or received without affecting what is stored.
package state
