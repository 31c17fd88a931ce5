package structs

import (
	"maps"
	"slices"
	"time"
)

// Allocation desired statuses, set by the server.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Allocation client statuses, reported by the client.
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
)

// Allocation is the placement of one task group instance on one node. The
// server creates it; the client runs it. A received *Allocation is immutable:
// updates replace it. Client-side runtime state (task states, client status)
// lives in the AllocRunner, not here.
type Allocation struct {
	ID                 string
	Namespace          string
	EvalID             string
	Name               string // "job.group[index]"
	NodeID             string
	NodeName           string
	JobID              string
	Job                *Job
	TaskGroup          string
	Resources          *Resources            // the total of the group's tasks
	TaskResources      map[string]*Resources // per task
	AllocatedResources *AllocatedResources
	Metrics            *AllocMetric
	DesiredStatus      string
	DesiredDescription string
	// DesiredTransition is what an operator asked beyond the desired
	// status (alloc stop's reschedule and no_shutdown_delay).
	DesiredTransition  DesiredTransition
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	DeploymentID       string
	DeploymentStatus   *AllocDeploymentStatus
	PreviousAllocation string
	NextAllocation     string
	// RescheduleTracker is the reschedule history this allocation inherits
	// from the failed allocations it replaced.
	RescheduleTracker *RescheduleTracker
	// FollowupEvalID is the delayed evaluation that will reschedule this
	// failed allocation.
	FollowupEvalID        string
	PreemptedAllocations  []string
	PreemptedByAllocation string
	// NetworkStatus is the allocation's own network (bridge or CNI mode)
	// as its client reports it; nil in host mode (network.go).
	NetworkStatus    *AllocNetworkStatus `json:",omitempty"`
	CreateIndex      uint64
	ModifyIndex      uint64
	AllocModifyIndex uint64 // changes when the server changes what the client must run
	CreateTime       int64
	ModifyTime       int64
}

// AllocatedResources is what the scheduler reserved for an allocation.
type AllocatedResources struct {
	Tasks  map[string]*AllocatedTaskResources
	Shared AllocatedSharedResources
}

// AllocatedTaskResources is what one task was given.
type AllocatedTaskResources struct {
	Cpu     AllocatedCpuResources
	Memory  AllocatedMemoryResources
	Devices []*AllocatedDeviceResource
	// Networks are the task-level network blocks of older jobs, as
	// placed: IP and every port's Value set.
	Networks []*NetworkResource `json:",omitempty"`
}

// AllocatedCpuResources is a task's CPU reservation.
type AllocatedCpuResources struct {
	CpuShares int64
}

// AllocatedMemoryResources is a task's memory reservation.
type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

// AllocatedSharedResources is what the group's tasks share.
type AllocatedSharedResources struct {
	// Networks is the group's network block as placed (IP and every
	// port's Value set); Ports the same ports as host mappings, which is
	// what tasks' environments and drivers read.
	Networks []*NetworkResource `json:",omitempty"`
	DiskMB   int64
	Ports    AllocatedPorts `json:",omitempty"`
}

// AllocMetric explains a placement: how many nodes were considered and why
// they were rejected. In an evaluation's FailedTGAllocs it explains a failure.
type AllocMetric struct {
	NodesEvaluated     int
	NodesFiltered      int
	NodesInPool        int
	NodesAvailable     map[string]int // by datacenter
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int // by constraint string
	NodesExhausted     int
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int // e.g. "memory", "cpu"
	QuotaExhausted     []string
	// Scores holds, by "<node ID>.<scorer>", the chosen node's score
	// components (Nomad's older form of ScoreMetaData).
	Scores            map[string]float64
	AllocationTime    time.Duration
	CoalescedFailures int
	// ScoreMetaData lists the best-scoring nodes considered for the
	// placement, best first, with their score components.
	ScoreMetaData []*NodeScoreMeta
}

// Scorer names used in NodeScoreMeta.Scores, as Nomad's.
const (
	ScorerBinPack           = "binpack"
	ScorerNodeAffinity      = "node-affinity"
	ScorerSpread            = "allocation-spread"
	ScorerReschedulePenalty = "node-reschedule-penalty"
	ScorerDevices           = "devices"
)

// NodeScoreMeta is how one node scored for a placement: each scorer's
// component and the final score the scheduler ranked the node by (their
// sum).
type NodeScoreMeta struct {
	NodeID    string
	Scores    map[string]float64
	NormScore float64
}

// TerminalStatus reports whether the allocation is finished from the
// server's point of view (desired stop/evict) or the client's (complete,
// failed, lost).
func (a *Allocation) TerminalStatus() bool {
	switch a.DesiredStatus {
	case AllocDesiredStatusStop, AllocDesiredStatusEvict:
		return true
	}
	return a.ClientTerminalStatus()
}

// ClientTerminalStatus reports whether the client has finished the allocation.
func (a *Allocation) ClientTerminalStatus() bool {
	switch a.ClientStatus {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// ServerTerminalStatus reports whether the server wants the allocation stopped.
func (a *Allocation) ServerTerminalStatus() bool {
	return a.DesiredStatus == AllocDesiredStatusStop || a.DesiredStatus == AllocDesiredStatusEvict
}

// Index returns the allocation's index in its group, parsed from its name.
func (a *Allocation) Index() int {
	l := len(a.Name)
	if l == 0 || a.Name[l-1] != ']' {
		return -1
	}
	i := l - 2
	for i >= 0 && a.Name[i] >= '0' && a.Name[i] <= '9' {
		i--
	}
	if i < 0 || a.Name[i] != '[' || i == l-2 {
		return -1
	}
	n := 0
	for _, c := range a.Name[i+1 : l-1] {
		n = n*10 + int(c-'0')
	}
	return n
}

// Copy returns a copy of the allocation that shares the (immutable) Job.
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := *a
	c.Resources = a.Resources.Copy()
	if a.TaskResources != nil {
		c.TaskResources = make(map[string]*Resources, len(a.TaskResources))
		for k, v := range a.TaskResources {
			c.TaskResources[k] = v.Copy()
		}
	}
	if a.AllocatedResources != nil {
		ar := *a.AllocatedResources
		ar.Tasks = make(map[string]*AllocatedTaskResources, len(a.AllocatedResources.Tasks))
		for k, v := range a.AllocatedResources.Tasks {
			t := *v
			if v.Devices != nil {
				t.Devices = make([]*AllocatedDeviceResource, len(v.Devices))
				for i, d := range v.Devices {
					dc := *d
					dc.DeviceIDs = slices.Clone(d.DeviceIDs)
					t.Devices[i] = &dc
				}
			}
			t.Networks = copyNetworks(v.Networks)
			ar.Tasks[k] = &t
		}
		ar.Shared.Networks = copyNetworks(a.AllocatedResources.Shared.Networks)
		ar.Shared.Ports = slices.Clone(a.AllocatedResources.Shared.Ports)
		c.AllocatedResources = &ar
	}
	c.NetworkStatus = a.NetworkStatus.Copy()
	if a.Metrics != nil {
		m := *a.Metrics
		c.Metrics = &m
	}
	if a.TaskStates != nil {
		c.TaskStates = make(map[string]*TaskState, len(a.TaskStates))
		for k, v := range a.TaskStates {
			c.TaskStates[k] = v.Copy()
		}
	}
	c.PreemptedAllocations = slices.Clone(a.PreemptedAllocations)
	c.DeploymentStatus = a.DeploymentStatus.Copy()
	c.RescheduleTracker = a.RescheduleTracker.Copy()
	return &c
}

// AllocListStub is the summary of an allocation returned by list endpoints.
type AllocListStub struct {
	ID                    string
	EvalID                string
	Name                  string
	Namespace             string
	NodeID                string
	NodeName              string
	JobID                 string
	JobType               string
	JobVersion            uint64
	TaskGroup             string
	DesiredStatus         string
	DesiredDescription    string
	ClientStatus          string
	ClientDescription     string
	TaskStates            map[string]*TaskState
	DeploymentStatus      *AllocDeploymentStatus
	RescheduleTracker     *RescheduleTracker
	FollowupEvalID        string
	NextAllocation        string
	PreemptedAllocations  []string
	PreemptedByAllocation string
	// AllocatedResources is set only when the list asks for resources.
	AllocatedResources *AllocatedResources `json:",omitempty"`
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
}

// Stub returns the list form of the allocation.
func (a *Allocation) Stub() *AllocListStub {
	s := &AllocListStub{
		ID:                    a.ID,
		EvalID:                a.EvalID,
		Name:                  a.Name,
		Namespace:             a.Namespace,
		NodeID:                a.NodeID,
		NodeName:              a.NodeName,
		JobID:                 a.JobID,
		TaskGroup:             a.TaskGroup,
		DesiredStatus:         a.DesiredStatus,
		DesiredDescription:    a.DesiredDescription,
		ClientStatus:          a.ClientStatus,
		ClientDescription:     a.ClientDescription,
		TaskStates:            a.TaskStates,
		DeploymentStatus:      a.DeploymentStatus,
		NextAllocation:        a.NextAllocation,
		RescheduleTracker:     a.RescheduleTracker,
		FollowupEvalID:        a.FollowupEvalID,
		PreemptedAllocations:  a.PreemptedAllocations,
		PreemptedByAllocation: a.PreemptedByAllocation,
		CreateIndex:           a.CreateIndex,
		ModifyIndex:           a.ModifyIndex,
		CreateTime:            a.CreateTime,
		ModifyTime:            a.ModifyTime,
	}
	if a.Job != nil {
		s.JobType = a.Job.Type
		s.JobVersion = a.Job.Version
	}
	return s
}

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// TaskState is the runtime state of one task, owned by its TaskRunner.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

// NewTaskState returns the state of a task that has not started.
func NewTaskState() *TaskState { return &TaskState{State: TaskStatePending} }

// Copy returns a deep copy; events are immutable and shared.
func (s *TaskState) Copy() *TaskState {
	if s == nil {
		return nil
	}
	c := *s
	c.Events = slices.Clone(s.Events)
	return &c
}

// Successful reports whether the task finished without failing.
func (s *TaskState) Successful() bool { return s.State == TaskStateDead && !s.Failed }

// Copy returns a copy of the event.
func (e *TaskEvent) Copy() *TaskEvent {
	if e == nil {
		return nil
	}
	c := *e
	c.Details = maps.Clone(e.Details)
	return &c
}
