package structs

import (
	"maps"
	"time"
)

// DrainSpec is what an operator asks of a drain (Nomad's DrainSpec).
type DrainSpec struct {
	// Deadline bounds the drain: past it the allocations still on the
	// node are stopped all at once. 0 is no deadline; a negative value
	// forces the drain now.
	Deadline time.Duration
	// IgnoreSystemJobs leaves the system jobs' allocations running on the
	// node.
	IgnoreSystemJobs bool
}

// DrainStrategy is a node's drain in progress. Its JSON flattens the
// DrainSpec as Nomad's does.
type DrainStrategy struct {
	DrainSpec
	// ForceDeadline is when the drain stops what is left; zero when it
	// has no deadline.
	ForceDeadline time.Time
	// StartedAt is when the drain began.
	StartedAt time.Time
}

// Copy returns a copy of d.
func (d *DrainStrategy) Copy() *DrainStrategy {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

// DeadlineTime reports whether the drain has no deadline (infinite) and
// otherwise when it is forced.
func (d *DrainStrategy) DeadlineTime() (infinite bool, deadline time.Time) {
	if d == nil {
		return false, time.Time{}
	}
	if d.Deadline == 0 {
		return true, time.Time{}
	}
	if d.Deadline < 0 {
		return false, d.StartedAt
	}
	return false, d.ForceDeadline
}

// DrainMetadata records a node's last drain (Nomad's LastDrain).
type DrainMetadata struct {
	StartedAt time.Time
	UpdatedAt time.Time
	// Status is "draining", "complete" or "canceled".
	Status string
	Meta   map[string]string
}

// Drain statuses of DrainMetadata.
const (
	DrainStatusDraining = "draining"
	DrainStatusComplete = "complete"
	DrainStatusCanceled = "canceled"
)

// Copy returns a copy of m.
func (m *DrainMetadata) Copy() *DrainMetadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Meta = maps.Clone(m.Meta)
	return &c
}

// Node events of drains and eligibility.
const (
	NodeEventDrainStarted   = "Node drain strategy set"
	NodeEventDrainCanceled  = "Node drain disabled"
	NodeEventDrainComplete  = "Node drain complete"
	NodeEventEligible       = "Node marked as eligible for scheduling"
	NodeEventIneligible     = "Node marked as ineligible for scheduling"
	NodeEventSubsystemDrain = "Drain"
)

// NodeUpdateDrainRequest starts (DrainStrategy set) or stops a node's
// drain (PUT /v1/node/:id/drain).
type NodeUpdateDrainRequest struct {
	NodeID        string
	DrainStrategy *DrainStrategy
	// MarkEligible makes the node eligible again when the drain is
	// stopped.
	MarkEligible bool
	// Meta is recorded with the drain (LastDrain.Meta).
	Meta map[string]string
	WriteRequest
}

// NodeUpdateEligibilityRequest sets a node's scheduling eligibility (PUT
// /v1/node/:id/eligibility).
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
	WriteRequest
}

// NodeDrainUpdateResponse answers NodeUpdateDrainRequest and
// NodeUpdateEligibilityRequest.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// The values of MigrateStrategy.HealthCheck.
const (
	// MigrateHealthCheckChecks: a replacement is healthy once its tasks
	// run and its service checks pass for MinHealthyTime (the default).
	MigrateHealthCheckChecks = "checks"
	// MigrateHealthCheckTaskStates: its tasks running for MinHealthyTime
	// is enough.
	MigrateHealthCheckTaskStates = "task_states"
)

// MigrateStrategy is a group's migrate block: how its allocations move off
// a draining node.
type MigrateStrategy struct {
	// MaxParallel is how many of the group's allocations may migrate at
	// once.
	MaxParallel int
	// HealthCheck is "checks" or "task_states": what makes a replacement
	// healthy.
	HealthCheck string
	// MinHealthyTime is how long a replacement must stay healthy.
	MinHealthyTime time.Duration
	// HealthyDeadline bounds how long a replacement may take to become
	// healthy.
	HealthyDeadline time.Duration
}

// DefaultMigrateStrategy returns Nomad's defaults of the migrate block.
func DefaultMigrateStrategy() *MigrateStrategy {
	return &MigrateStrategy{
		MaxParallel: 1, HealthCheck: MigrateHealthCheckChecks,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute,
	}
}

// ShouldMigrate reports whether the allocation is marked to move off its
// node.
func (d DesiredTransition) ShouldMigrate() bool { return d.Migrate != nil && *d.Migrate }
