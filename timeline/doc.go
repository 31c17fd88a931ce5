// Package timeline records, in memory, when each allocation (and the
// evaluation that placed it) reached each step of its way from its job's
// registration to its task running, and of its stop (structs.TimelineStep).
//
// Where it sits in the data flow: beside it, watching. The server keeps a
// Recorder for the steps of evaluations and plans (by evaluation ID, then
// by allocation ID once placed); the node's client keeps one for the
// steps of its allocations, which its AllocRunners and TaskRunners mark.
// The HTTP API merges both parts (GET /v1/client/allocation/:id/timeline,
// served by the node's agent), `drover alloc status -verbose` prints them,
// and bench/latency reads them for many allocations at once.
//
// A Recorder keeps the first time each step is reached per ID, for its
// most recent Limit IDs: marking a step costs one mutex and one map
// lookup, and memory is bounded (about 200 bytes an ID). Nothing is
// persisted: an agent that restarts forgets its timelines.
package timeline
