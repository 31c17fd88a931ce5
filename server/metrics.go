package server

import (
	"time"

	"github.com/drover-io/drover/structs"
)

// Timers records how long the server's steps take; the agent's telemetry
// (a go-metrics Metrics) implements it.
type Timers interface {
	MeasureSince(key []string, start time.Time)
}

// noTimers records nothing.
type noTimers struct{}

func (noTimers) MeasureSince([]string, time.Time) {}

// Plan and worker timers, named as Nomad names them under its "nomad"
// service prefix where it has them.
var (
	// timerPlanSubmit is a plan's time from its submission to its result;
	// timerPlanQueue the part before the applier took it.
	timerPlanSubmit = []string{"nomad", "plan", "submit"}
	timerPlanQueue  = []string{"nomad", "plan", "queue_wait"}
	// timerPlanEvaluate is the applier's check of a plan against the
	// state; timerPlanApply its raft commit (and the leader's FSM apply).
	timerPlanEvaluate = []string{"nomad", "plan", "evaluate"}
	timerPlanApply    = []string{"nomad", "plan", "apply"}
	// timerFSMPlanResults is one server's FSM apply of a plan result.
	timerFSMPlanResults = []string{"nomad", "fsm", "apply_plan_results"}
	// Worker steps: the dequeue from the leader's broker, the wait for
	// this server's state to reach the index the evaluation needs, the
	// scheduler, the plan's round trip to the leader, the acknowledgement.
	timerWorkerDequeue      = []string{"nomad", "worker", "dequeue_eval"}
	timerWorkerWaitForIndex = []string{"nomad", "worker", "wait_for_index"}
	timerWorkerInvoke       = []string{"nomad", "worker", "invoke_scheduler"}
	timerWorkerSubmitPlan   = []string{"nomad", "worker", "submit_plan"}
	timerWorkerAck          = []string{"nomad", "worker", "send_ack"}
)

// Metrics is a snapshot of the server's gauges for the agent's telemetry.
type Metrics struct {
	// Leader is whether this server leads; job summaries are the
	// leader's to publish.
	Leader bool
	// BrokerReady, BrokerUnacked, BrokerPending and BrokerWaiting count
	// the broker's evaluations: ready to dequeue, dequeued and not yet
	// acknowledged, waiting behind another evaluation of their job, and
	// delayed (wait_until).
	BrokerReady, BrokerUnacked, BrokerPending, BrokerWaiting int
	// Blocked counts the evaluations blocked on capacity.
	Blocked int
	// PlanQueueDepth counts the plans waiting for the plan applier.
	PlanQueueDepth int
	// HeartbeatsActive counts the nodes with a heartbeat timer.
	HeartbeatsActive int
	// JobSummaries are every job's summary (read-only state store
	// objects); nil on a follower.
	JobSummaries []*structs.JobSummary
}

// Metrics samples the server's gauges.
func (s *Server) Metrics() (*Metrics, error) {
	bs := s.broker.Stats()
	m := &Metrics{
		Leader:           s.leader(),
		BrokerReady:      bs.Ready,
		BrokerUnacked:    bs.InFlight,
		BrokerPending:    bs.Waiting,
		BrokerWaiting:    bs.Delayed,
		Blocked:          s.blocked.Len(),
		PlanQueueDepth:   int(s.planWaiting.Load()),
		HeartbeatsActive: s.heartbeats.Len(),
	}
	if m.Leader {
		sums, err := s.fsm.State().JobSummaries(nil)
		if err != nil {
			return m, err
		}
		m.JobSummaries = sums
	}
	return m, nil
}
