package structs

// TimelineStep is one step of an allocation's way from its job's
// registration to its task running, and then of its stop, in the order of
// the way. The servers record the steps up to plan_applied,
// running_applied and ended_applied, the node the others (package
// timeline keeps them in memory).
type TimelineStep uint8

// The steps of an allocation's timeline.
const (
	// StepJobRegistered: the register request (or any write creating the
	// evaluation) reached the server.
	StepJobRegistered TimelineStep = iota + 1
	// StepEvalEnqueued: the evaluation, committed, entered the broker.
	StepEvalEnqueued
	// StepEvalDequeued: a scheduler worker took it.
	StepEvalDequeued
	// StepPlanSubmitted: the worker handed its plan to the plan applier.
	StepPlanSubmitted
	// StepPlanApplied: the plan placing the allocation was committed.
	StepPlanApplied
	// StepAllocReceived: the node's client fetched the new allocation.
	StepAllocReceived
	// StepRunnerStarted: its AllocRunner began to run (alloc state
	// persisted).
	StepRunnerStarted
	// StepHooksDone: a task's prestart hooks finished (first start).
	StepHooksDone
	// StepDriverStart: the task's start intent is durable and the driver
	// is asked to start it (for raw_exec and exec: the shim is launched).
	StepDriverStart
	// StepTaskRunning: the driver returned the running task's handle and
	// the running state is durable.
	StepTaskRunning
	// StepStatusSent: the client sent the update saying the allocation
	// runs (the time the successful call began).
	StepStatusSent
	// StepRunningApplied: the servers committed that update.
	StepRunningApplied
	// StepStopReceived: the node's client fetched the version of the
	// allocation that stops it (job stopped, alloc stopped, evicted).
	StepStopReceived
	// StepEnded: the allocation's client status became terminal
	// (complete, failed, lost): its tasks are dead.
	StepEnded
	// StepEndedApplied: the servers committed the terminal status.
	StepEndedApplied

	// NumTimelineSteps is one past the last step.
	NumTimelineSteps
)

// String returns the step's name on the wire (job_registered, ...).
func (s TimelineStep) String() string {
	switch s {
	case StepJobRegistered:
		return "job_registered"
	case StepEvalEnqueued:
		return "eval_enqueued"
	case StepEvalDequeued:
		return "eval_dequeued"
	case StepPlanSubmitted:
		return "plan_submitted"
	case StepPlanApplied:
		return "plan_applied"
	case StepAllocReceived:
		return "alloc_received"
	case StepRunnerStarted:
		return "runner_started"
	case StepHooksDone:
		return "hooks_done"
	case StepDriverStart:
		return "driver_start"
	case StepTaskRunning:
		return "task_running"
	case StepStatusSent:
		return "status_sent"
	case StepRunningApplied:
		return "running_applied"
	case StepStopReceived:
		return "stop_received"
	case StepEnded:
		return "ended"
	case StepEndedApplied:
		return "ended_applied"
	}
	return "unknown"
}

// TimelineEntry is a step of a timeline and when it was first reached.
type TimelineEntry struct {
	Step TimelineStep
	// Time is when it was reached, in Unix nanoseconds.
	Time int64
}

// AllocTimelineResponse is the servers' part of an allocation's timeline:
// the steps of its evaluation and of its placement, in step order.
type AllocTimelineResponse struct {
	// AllocID is the allocation's full ID; EvalID is the evaluation that
	// placed it.
	AllocID string
	EvalID  string
	Entries []TimelineEntry
	QueryMeta
}
