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
package raftbolt
