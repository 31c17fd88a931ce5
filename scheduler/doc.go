// Package scheduler is Drover's placement logic: given an evaluation and a
// read-only view of the cluster state, it decides which allocations to stop
// and where to place new ones, and returns that decision as a Plan.
//
// Where it sits in the data flow: a server worker dequeues an evaluation,
// calls Process with a state snapshot, and hands the Plan to the plan
// applier, which re-checks it against the latest state and commits it
// through raft. The package is pure: no goroutines, no I/O, no clock or
// randomness it does not get from Options (the order nodes are visited in
// is shuffled by a generator seeded with the evaluation's ID); the same
// inputs give the same plan, which the golden tests in testdata/ rely on. Options.Context
// interrupts a run between placements (a worker's evaluation deadline,
// a plan request whose caller went away); it is only read, never waited on.
//
// Job types: service and batch share the generic scheduler (reconcile the
// desired count per group against existing allocations, then bin-pack the
// missing ones); system jobs get one allocation per eligible node, and so
// do sysbatch jobs, whose finished allocations are not placed again.
// Periodic and parameterized jobs are templates: never placed.
//
// Placement (placer.go): a group's candidate nodes wait, scored, in
// max-heaps (one per combination of spread values), so a placement costs
// O(log n) rather than a scan of every node; the nodes are visited in an
// order shuffled per evaluation until the heaps hold a sample large
// enough, and all of them when the group has spreads or affinities or a
// placement fits nowhere. Feasibility (feasible.go) is decided once per
// computed node class; each node's usage (rank.go) is read once per
// evaluation and kept current. A node's score is the sum of bin-packing
// (rank.go), device affinity (devices.go), node affinity (affinity.go),
// spread (spread.go) and the reschedule penalty (reschedule.go); equal
// scores are ranked by a key hashed from the node and evaluation IDs
// (candidates.go), so concurrent evaluations of different jobs do not all
// take the same one of equal nodes. See docs/jobs.md and
// docs/performance.md.
//
// Job updates (update.go, deployment.go): an allocation of an older job
// version is updated in place when tasksUpdated and jobUpdated say nothing
// the tasks see changed, and replaced otherwise; a service group with a
// rolling update strategy replaces at most MaxParallel allocations at a
// time under a Deployment, the next batch once the client reported the
// previous one healthy. In-place updates join the deployment with their
// health reset; those that change services or checks share the
// MaxParallel budget (servicesUpdated). Preemption (preempt.go): a placement that fits
// nowhere may evict allocations of lower-priority jobs when the scheduler
// configuration allows it for the job's type. See
// docs/updates-and-preemption.md.
//
// Constraints (constraint.go, feasible.go): a node is feasible when it meets
// the job's, the group's and its tasks' constraints, with Nomad's operator
// semantics (docs/constraints.md). distinct_hosts and distinct_property
// (distinct_property.go) are checked when an allocation is placed, against
// the job's live allocations and the plan built so far.
//
// Ports (ports.go) are a node resource: a group's static and dynamic ports
// get host ports free on the address of their host network, dynamic ones
// picked from the node's range with Options.Rand; a port already taken
// exhausts the node ("network: port collision http=8080"), a missing host
// network filters it. See docs/networking.md.
package scheduler
