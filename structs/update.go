package structs

import (
	"slices"
	"time"
)

// Health check sources of an update strategy.
const (
	UpdateStrategyHealthCheckChecks     = "checks"
	UpdateStrategyHealthCheckTaskStates = "task_states"
	UpdateStrategyHealthCheckManual     = "manual"
)

// UpdateStrategy says how a service job's allocations are replaced when the
// job changes: MaxParallel at a time, each healthy for MinHealthyTime within
// HealthyDeadline before the next batch. A nil strategy, or MaxParallel 0,
// replaces everything at once.
type UpdateStrategy struct {
	Stagger          time.Duration
	MaxParallel      int
	HealthCheck      string
	MinHealthyTime   time.Duration
	HealthyDeadline  time.Duration
	ProgressDeadline time.Duration
	AutoRevert       bool
	AutoPromote      bool
	Canary           int
}

// DefaultUpdateStrategy returns Nomad's defaults for an update block.
func DefaultUpdateStrategy() *UpdateStrategy {
	return &UpdateStrategy{
		Stagger:          30 * time.Second,
		MaxParallel:      1,
		HealthCheck:      UpdateStrategyHealthCheckChecks,
		MinHealthyTime:   10 * time.Second,
		HealthyDeadline:  5 * time.Minute,
		ProgressDeadline: 10 * time.Minute,
	}
}

// Rolling reports whether the strategy replaces allocations in batches.
func (u *UpdateStrategy) Rolling() bool { return u != nil && u.MaxParallel > 0 }

// Copy returns a copy of u.
func (u *UpdateStrategy) Copy() *UpdateStrategy {
	if u == nil {
		return nil
	}
	c := *u
	return &c
}

// AllocDeploymentStatus is the client's verdict on an allocation's health
// during a deployment. Healthy is nil until the client decides.
type AllocDeploymentStatus struct {
	Healthy     *bool
	Timestamp   time.Time
	Canary      bool
	ModifyIndex uint64
}

// IsHealthy reports whether the allocation was found healthy.
func (s *AllocDeploymentStatus) IsHealthy() bool { return s != nil && s.Healthy != nil && *s.Healthy }

// IsUnhealthy reports whether the allocation was found unhealthy.
func (s *AllocDeploymentStatus) IsUnhealthy() bool {
	return s != nil && s.Healthy != nil && !*s.Healthy
}

// Copy returns a copy of s.
func (s *AllocDeploymentStatus) Copy() *AllocDeploymentStatus {
	if s == nil {
		return nil
	}
	c := *s
	if s.Healthy != nil {
		h := *s.Healthy
		c.Healthy = &h
	}
	return &c
}

// Deployment statuses.
const (
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusCancelled  = "cancelled"
)

// Deployment tracks the rolling replacement of a job's allocations by a new
// job version.
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	TaskGroups         map[string]*DeploymentState
	Status             string
	StatusDescription  string
	CreateIndex        uint64
	ModifyIndex        uint64
}

// DeploymentState is one group's progress in a deployment.
type DeploymentState struct {
	AutoRevert        bool
	AutoPromote       bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	// Promoted is set once the group's canaries were promoted (by hand or
	// auto_promote): the rest of the group then rolls.
	Promoted bool
	// PlacedCanaries are the IDs of the canary allocations placed for the
	// group, in placement order.
	PlacedCanaries  []string
	DesiredCanaries int
	DesiredTotal    int
	PlacedAllocs    int
	HealthyAllocs   int
	UnhealthyAllocs int
}

// HasCanaries reports whether the group places canaries that are not
// promoted yet.
func (s *DeploymentState) HasCanaries() bool { return s != nil && s.DesiredCanaries > 0 && !s.Promoted }

// Active reports whether the deployment is still in progress.
func (d *Deployment) Active() bool {
	return d.Status == DeploymentStatusRunning || d.Status == DeploymentStatusPaused
}

// Copy returns a deep copy of d.
func (d *Deployment) Copy() *Deployment {
	if d == nil {
		return nil
	}
	c := *d
	if d.TaskGroups != nil {
		c.TaskGroups = make(map[string]*DeploymentState, len(d.TaskGroups))
		for k, v := range d.TaskGroups {
			s := *v
			s.PlacedCanaries = slices.Clone(v.PlacedCanaries)
			c.TaskGroups[k] = &s
		}
	}
	return &c
}

// SchedulerConfiguration is the cluster-wide scheduler configuration, set
// with PUT /v1/operator/scheduler/configuration.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	// NodeLimitForFeasibilityChecks is Nomad's bound on the nodes whose
	// feasibility is explained after a failed placement: kept and shown
	// as set, for Nomad's clients; drover's scheduler explains every node.
	NodeLimitForFeasibilityChecks uint
	CreateIndex                   uint64
	ModifyIndex                   uint64
}

// PreemptionConfig switches preemption on per scheduler type.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// Scheduler algorithms.
const (
	SchedulerAlgorithmBinpack = "binpack"
	SchedulerAlgorithmSpread  = "spread"
)

// DefaultSchedulerConfiguration returns Nomad's defaults: binpack, and
// preemption enabled for system jobs only.
func DefaultSchedulerConfiguration() *SchedulerConfiguration {
	return &SchedulerConfiguration{
		SchedulerAlgorithm: SchedulerAlgorithmBinpack,
		PreemptionConfig:   PreemptionConfig{SystemSchedulerEnabled: true},
	}
}

// PreemptionEnabled reports whether jobs of the given type may preempt.
func (c *SchedulerConfiguration) PreemptionEnabled(jobType string) bool {
	if c == nil {
		return jobType == JobTypeSystem
	}
	switch jobType {
	case JobTypeSystem:
		return c.PreemptionConfig.SystemSchedulerEnabled
	case JobTypeBatch:
		return c.PreemptionConfig.BatchSchedulerEnabled
	case JobTypeSysBatch:
		return c.PreemptionConfig.SysBatchSchedulerEnabled
	case JobTypeService:
		return c.PreemptionConfig.ServiceSchedulerEnabled
	}
	return false
}
