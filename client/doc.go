// Package client is Drover's node agent: it fingerprints the node,
// registers it with the servers and heartbeats, watches the allocations the
// servers assign to it, runs each in an AllocRunner, and sends their
// client-side state back to the servers in batches.
//
// The host fingerprint (fingerprint.go: pure, fed by fingerprint_linux.go)
// gives the node Nomad's attributes (cpu.*, kernel.*, os.*, unique.*,
// nomad.version, ...) and its resources; FingerprintConfig selects
// fingerprinters by Nomad's names and the network interface.
//
// Where it sits in the data flow: the agent (agent/) builds a Config with an
// RPC, an rpcapi.Conn through which it calls the server's declared methods
// (in process, *server.Server; over the network, client/rpcclient), and
// the driver manager's config (the built-in driver catalog, plugin configs,
// plugin_dir), calls New, which starts client/drivermanager, and Start. The
// driver manager reports each driver's fingerprint through
// UpdateNodeFromDriver; a change of a driver's health re-registers the node
// with the servers (drivers.go). AllocRunners and their TaskRunners get
// their drivers from the manager (Dispense). A blocking query on
// NodeGetClientAllocs tells the client which allocations changed; it fetches
// those with AllocGetAllocs, diffs them into added / updated / removed, and
// hands them to AllocRunners without ever waiting on one. AllocRunners
// report state changes, which are coalesced per allocation and sent with
// NodeUpdateAlloc: at once when the sync loop is idle, else together once
// the previous batch is 20 ms old (alloc_sync.go).
//
// Terminal allocations are garbage collected (gc.go): a pure selection
// (selectGC) picks the oldest terminal ones while the node holds more than
// GCConfig.MaxAllocs allocations or the alloc dir's filesystem is above its
// disk or inode threshold; a loop runs it every GCConfig.Interval, and
// CollectAllGarbage (`drover system gc`) removes every terminal one now.
// Running and pending allocations are never collected.
//
// An allocation that replaces another (PreviousAllocation) or preempts
// others (PreemptedAllocations) gets watchers from client/allocwatcher
// (alloc_watchers.go): local ones over the runners this client holds,
// remote ones over the servers (AllocGetAllocs as a blocking query, and
// NodeGet for the previous node's HTTP address, from which
// SnapshotAlloc's tar.gz of the data is fetched when the disk is sticky
// and migrate). Deployment health (DeploymentStatus) travels with the
// batched updates.
//
// Local state (node identity, allocations, task handles and start
// intents) lives in a client/state.StateDB so that a restarted agent
// re-attaches to its tasks. At every start, after restoring its
// allocations and before running them, the client reconciles the task
// shims under its alloc dir with that state (reconcile.go): a shim of an
// invocation no restored task knows is stopped, never left running as an
// orphan beside a replacement.
package client
