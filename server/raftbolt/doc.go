// Package raftbolt is a raft log store and stable store in one bbolt file.
//
// Where it sits in the data flow: every change to the cluster state (a job
// registered, an allocation placed) is a raft log entry; the server's raft
// instance appends entries here before applying them to the FSM, and keeps
// its term and vote here, so that a restarted server replays what it had
// committed. Snapshots live beside it in raft's file snapshot store; raft
// compacts this log once a snapshot covers it.
//
// The file holds two buckets: "logs" (big-endian index -> msgpack raft.Log)
// and "conf" (key -> value). It is drover's own (hashicorp/raft-boltdb does
// not build against the raft and go-metrics versions drover uses).
//
// Open never trusts an existing file: it walks the bounds of every page
// with plain reads (pagewalk.go), then reads every entry and runs bbolt's
// check on a read-only open (inspect.go), and refuses a damaged file with
// ErrCorrupt, naming it and saying what to do, instead of letting bbolt
// panic or fault on it later. A new file is written whole under a
// temporary name and renamed, so an empty raft.db is always damage.
package raftbolt
