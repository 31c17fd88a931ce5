package api

import (
	"net/url"
	"sort"
	"time"
)

// Allocation desired and client statuses.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"

	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
)

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// Allocations is the allocation endpoints of the API.
type Allocations struct{ c *Client }

// Allocations returns the allocation endpoints.
func (c *Client) Allocations() *Allocations { return &Allocations{c: c} }

// Allocation is the placement of one task group instance on one node.
type Allocation struct {
	ID                 string
	Namespace          string
	EvalID             string
	Name               string
	NodeID             string
	NodeName           string
	JobID              string
	Job                *Job
	TaskGroup          string
	Resources          *Resources
	TaskResources      map[string]*Resources
	AllocatedResources *AllocatedResources
	Metrics            *AllocationMetric
	DesiredStatus      string
	DesiredDescription string
	// DesiredTransition is what was asked of the allocation beyond its
	// desired status (Migrate: a drain moves it off its node).
	DesiredTransition  DesiredTransition
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	DeploymentID       string
	DeploymentStatus   *AllocDeploymentStatus
	PreviousAllocation string
	NextAllocation     string
	// RescheduleTracker is the reschedule history inherited from the
	// failed allocations this one replaced.
	RescheduleTracker *RescheduleTracker `json:",omitempty"`
	// FollowupEvalID is the delayed evaluation that will reschedule this
	// failed allocation.
	FollowupEvalID        string `json:",omitempty"`
	PreemptedAllocations  []string
	PreemptedByAllocation string
	// NetworkStatus is the allocation's own network (bridge or CNI
	// mode); in host mode, empty but for the group's DNS; nil until the
	// client reports it.
	NetworkStatus    *AllocNetworkStatus `json:",omitempty"`
	CreateIndex      uint64
	ModifyIndex      uint64
	AllocModifyIndex uint64
	CreateTime       int64 // Unix nanoseconds
	ModifyTime       int64 // Unix nanoseconds
}

// AllocDeploymentStatus is the client's verdict on an allocation placed
// by a deployment: Healthy is nil until it decides.
type AllocDeploymentStatus struct {
	Healthy     *bool
	Timestamp   time.Time
	Canary      bool
	ModifyIndex uint64
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
	Devices []*AllocatedDeviceResource `json:",omitempty"`
	// Networks are the task-level network blocks of older jobs, as placed.
	Networks []*NetworkResource `json:",omitempty"`
}

// AllocatedCpuResources is a task's CPU reservation in MHz.
type AllocatedCpuResources struct {
	CpuShares int64
}

// AllocatedMemoryResources is a task's memory reservation in MB.
type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

// AllocatedSharedResources is what the group's tasks share.
type AllocatedSharedResources struct {
	// Networks is the group's network block as placed (IP and port
	// values set); Ports the same ports as host mappings.
	Networks []*NetworkResource `json:",omitempty"`
	DiskMB   int64
	Ports    []PortMapping `json:",omitempty"`
}

// PortMapping is one port given to an allocation: host port Value on
// HostIP, reached in the task's network on To (0: Value).
type PortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// AllocNetworkStatus is an allocation's own network (bridge or CNI mode)
// as its client reports it.
type AllocNetworkStatus struct {
	InterfaceName string     `json:",omitempty"`
	Address       string     `json:",omitempty"`
	AddressIPv6   string     `json:",omitempty"`
	DNS           *DNSConfig `json:",omitempty"`
}

// AllocationListStub is the summary of an allocation returned by lists.
type AllocationListStub struct {
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
	FollowupEvalID        string
	NextAllocation        string
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	CreateTime            int64 // Unix nanoseconds
	ModifyTime            int64 // Unix nanoseconds
}

// TaskState is the runtime state of one task of an allocation.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent // oldest first
}

// TaskEvent is one step in a task's life.
type TaskEvent struct {
	Type           string
	Time           int64 // Unix nanoseconds
	Message        string
	DisplayMessage string
	Details        map[string]string

	FailsTask        bool
	RestartReason    string
	SetupError       string
	DriverError      string
	DriverMessage    string
	ExitCode         int
	Signal           int
	KillTimeout      time.Duration
	KillError        string
	KillReason       string
	StartDelay       int64
	FailedSibling    string
	TaskSignalReason string
	TaskSignal       string
	GenericSource    string
	OOMKilled        bool   `json:",omitempty"`
	DownloadError    string `json:",omitempty"`
}

// List returns the allocations, oldest first.
func (a *Allocations) List(q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	var resp []*AllocationListStub
	qm, err := a.c.query("/v1/allocations", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	sortAllocStubs(resp)
	return resp, qm, nil
}

// Info returns one allocation by its full ID.
func (a *Allocations) Info(allocID string, q *QueryOptions) (*Allocation, *QueryMeta, error) {
	var resp Allocation
	qm, err := a.c.query("/v1/allocation/"+url.PathEscape(allocID), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

func sortAllocStubs(s []*AllocationListStub) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].CreateIndex != s[j].CreateIndex {
			return s[i].CreateIndex < s[j].CreateIndex
		}
		return s[i].ID < s[j].ID
	})
}

// RescheduleTracker is an allocation's reschedule history, oldest first.
type RescheduleTracker struct {
	Events []*RescheduleEvent
}

// RescheduleEvent is one reschedule of an allocation's lineage.
type RescheduleEvent struct {
	RescheduleTime int64 // Unix nanoseconds
	PrevAllocID    string
	PrevNodeID     string
	Delay          time.Duration
}
