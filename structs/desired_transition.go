package structs

// DesiredTransition records what an operator asked of an allocation beyond
// its desired status (Nomad's field of the same name). Unset is not false:
// each is nil until asked.
type DesiredTransition struct {
	// Migrate marks the allocation to be moved off its node.
	Migrate *bool
	// Reschedule marks the allocation to be replaced elsewhere.
	Reschedule *bool
	// ForceReschedule replaces a failed allocation now, whatever its
	// reschedule policy's delay.
	ForceReschedule *bool
	// NoShutdownDelay stops the allocation's tasks without waiting for
	// their shutdown_delay.
	NoShutdownDelay *bool
}

// ShouldReschedule reports whether the allocation is marked to be
// replaced.
func (d DesiredTransition) ShouldReschedule() bool { return d.Reschedule != nil && *d.Reschedule }

// ShouldIgnoreShutdownDelay reports whether the allocation's tasks stop
// without their shutdown delay.
func (d DesiredTransition) ShouldIgnoreShutdownDelay() bool {
	return d.NoShutdownDelay != nil && *d.NoShutdownDelay
}
