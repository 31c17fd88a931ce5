// Package state is the server's cluster state: go-memdb tables of jobs, job
// summaries, allocations, evaluations and nodes, plus the raft index at which
// each table last changed.
//
// Where it sits in the data flow: the server's raft FSM is the only writer; it
// decodes committed log entries and calls the write methods here with the
// entry's raft index. RPC endpoints read through the same StateStore (with a
// memdb.WatchSet for blocking queries) and the scheduler reads a
// StateSnapshot, a consistent read-only view.
//
// Objects returned by any read are shared with the store and read-only:
// Copy() one before changing it.
package state
