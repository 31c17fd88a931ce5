package structs

// AllocStopRequest stops one allocation so that the scheduler replaces it
// (`drover alloc stop`, PUT /v1/allocation/:id/stop).
type AllocStopRequest struct {
	// AllocID is the allocation's full ID.
	AllocID string
	// NoShuffle is accepted for compatibility with Nomad's API; placement
	// of the replacement does not depend on it.
	NoShuffle bool
	// Reschedule marks the stopped allocation's DesiredTransition to be
	// rescheduled (its replacement is placed either way).
	Reschedule bool
	// NoShutdownDelay marks the stopped allocation's tasks to stop
	// without their shutdown_delay.
	NoShutdownDelay bool
	WriteRequest
}

// AllocStopResponse names the evaluation that replaces the stopped
// allocation.
type AllocStopResponse struct {
	EvalID string
	WriteMeta
}
