// Package server is Drover's control plane: it validates and stores jobs,
// schedules them, and serves clients their allocations.
//
// Where it sits in the data flow: the agent's HTTP layer and the node
// clients call Server methods (JobRegister, NodeRegister,
// NodeGetClientAllocs, ...). Every state change is encoded as one raft log
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
// Goroutines (each owned by the Server, stopped and waited for by
// Shutdown): raft's own, the leader monitor, the eval workers, the plan
// applier and the heartbeat expiry loop.
package server
