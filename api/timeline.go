package api

import "net/url"

// AllocTimeline is the way of one allocation from its job's registration
// to its task running (and to its end), as the agents recorded it in
// memory (a drover
// extension: GET /v1/client/allocation/<id>/timeline; Nomad's agents
// answer 404). Steps are in the order of the way; a step neither the
// servers nor the node recorded (the agent restarted since, or forgot it
// among many newer allocations) is absent.
type AllocTimeline struct {
	AllocID string
	EvalID  string
	Steps   []TimelineStep
}

// TimelineStep is one step of an allocation's way and when it was first
// reached.
type TimelineStep struct {
	// Name is the step: job_registered, eval_enqueued, eval_dequeued,
	// plan_submitted, plan_applied (servers), alloc_received,
	// runner_started, hooks_done, driver_start, task_running, status_sent
	// (the node), running_applied (servers); then, once it is stopped,
	// stop_received, ended (the node) and ended_applied (servers).
	Name string
	// Time is when it was reached, in Unix nanoseconds.
	Time int64
}

// Timeline returns the timeline of an allocation, by its full ID, from
// the agent of the node it runs on (this agent forwards the request).
func (a *Allocations) Timeline(allocID string) (*AllocTimeline, error) {
	var resp AllocTimeline
	if _, err := a.c.query("/v1/client/allocation/"+url.PathEscape(allocID)+"/timeline", &resp, nil); err != nil {
		return nil, err
	}
	return &resp, nil
}
