// Package events is the server's event stream: the ordered record of what
// raft applies changed (jobs, allocations, evaluations, deployments,
// nodes), kept in a bounded in-memory buffer that subscribers read from.
//
// Where it sits in the data flow: the FSM (server/fsm.go) publishes one
// batch per raft apply that changed one of those tables, built from the
// state store's change list, so batches are in raft order and complete;
// GET /v1/event/stream (httpapi/events.go) subscribes and writes each
// batch as a line of JSON. Publish never blocks: a subscriber that falls
// more than the buffer's size behind loses its place, and its Next says
// so (ErrLagged), which ends its stream.
package events
