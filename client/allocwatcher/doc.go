// Package allocwatcher makes a replacement allocation wait for the
// allocations it replaces, and moves their ephemeral disk to it.
//
// Where it sits in the data flow: when the Client creates an AllocRunner
// for an allocation with a PreviousAllocation or PreemptedAllocations, it
// builds watchers here and hands them to the runner, whose alloc watcher
// prerun hook calls Wait (the allocation stays pending meanwhile) and then
// Migrate, before any task starts.
//
//   - A local watcher follows a previous allocation that runs on this node,
//     only through its runner's alloc broadcaster (AllocRunnerMeta), and
//     moves alloc/data and each task's local/ directory by renaming them.
//   - A remote watcher follows a previous allocation on another node through
//     the servers (ServerLookup, a blocking query), then streams a tar.gz
//     snapshot of its data from that node's client HTTP API
//     (GET /v1/client/allocation/:id/snapshot) and unpacks it safely.
//   - A group watcher waits for every allocation a preempting allocation
//     evicts; NoopPrevAllocWatcher is used when there is nothing to wait for.
//
// The package never imports the alloc runner: it defines the small
// interfaces it needs and the Client adapts the runner to them, so there is
// no cycle between the runner and its watchers.
package allocwatcher
