// Package server is Drover's control plane: it validates and stores jobs,
// schedules them, and serves clients their allocations.
//
// Where it sits in the data flow: the agent's HTTP layer and the node
// clients call the server's methods (JobRegister, NodeRegister,
// NodeGetClientAllocs, ...) through rpcapi, which declares them:
// rpc_api.go binds each declared method to its implementation (a Server is
// an rpcapi.Conn in process) and rpcserver.go serves them on the RPC port.
// Every state change is encoded as one raft log
// entry (raftApply) and applied by the FSM to the go-memdb state store in
// server/state. On the leader, evaluations with status pending enter the
// eval broker; workers dequeue them, run the pure scheduler package on a
// state snapshot and submit the plan to the single plan applier, which
// re-checks node capacity against the latest state and commits the
// allocations and the evaluation's outcome through raft. Placements that
// do not fit create blocked evaluations, re-enqueued when capacity may have
// changed. Heartbeat timers mark silent nodes down and their allocations
// lost, which creates evaluations that replace them.
//
// Job versions (the last structs.JobTrackedVersions of each job), rolling
// update deployments and the scheduler configuration live in the state
// store too. The deployment watcher (deployment_watcher.go) turns client
// health reports into evaluations and auto-reverts failed deployments;
// JobPlan runs the scheduler on a snapshot without committing anything.
//
// Periodic and parameterized jobs (periodic.go, periodic_endpoint.go) are
// templates stored without an evaluation. On the leader only, the
// periodic dispatcher launches a periodic job's child at each cron tick in
// one raft entry with the job's launch record (state's periodic_launch
// table), so a tick launches at most once across leader changes;
// JobPeriodicForce launches one now and JobDispatch instantiates a
// parameterized job with its payload and meta.
//
// Workers and the broker (eval_broker.go, worker.go): Config.NumWorkers
// workers (one per core by default; none when negative) dequeue from the
// broker, which hands out ready evaluations by priority, highest first,
// FIFO among equals, and holds at most one evaluation per job ready or in
// flight; the job's others wait behind it. A pass schedules on a snapshot
// under a deadline (Config.EvalTimeout, passed to the scheduler as its
// Options.Context and cancelled at Shutdown too); past it the evaluation
// is failed with the reason. When the plan commits, the job's other
// evaluations that the pass covered (pending ones written before its
// snapshot, blocked ones) are cancelled with it, so a burst of evaluations
// costs one pass. Plans are optimistic: the plan applier, alone, re-checks
// each node of a plan against the latest state plus the plans ahead of it
// not yet committed (ready, capacity, and that allocations it updates in
// place were not stopped or preempted since), commits what holds (the
// plans that come while one raft entry commits go together in the next:
// plan_batch.go) and reports the rest rejected with the index of the
// state it checked against; the worker then schedules again on a snapshot
// at least that new (on a follower it waits for it), for as long as its
// passes place something or other plans keep winning the room
// (maxPlanAttempts, maxContendedAttempts in worker.go).
//
// Node calls (node_endpoint.go) are authenticated by the node's secret ID,
// which no response carries; a job's counts are bounded by
// Config.JobMaxCount (limits.go); a command reaches raft only once it
// decodes back (messages.go: storable), and the FSM skips, never panics
// on, an entry it cannot apply. See docs/security.md.
//
// Goroutines (each owned by the Server, stopped and waited for by
// Shutdown): raft's own, the leader monitor, the eval workers, the plan
// applier, the heartbeat expiry loop and, while leading, the periodic
// dispatcher (started and stopped with leadership). NewServer waits for leadership
// for as long as its context allows, logging its progress.
package server
