package structs

import (
	"fmt"
	"maps"
	"sort"
)

// Scaling policy types, as Nomad's: a group's count (horizontal), or a
// task's CPU or memory (vertical, for an external autoscaler).
const (
	ScalingPolicyTypeHorizontal  = "horizontal"
	ScalingPolicyTypeVerticalCPU = "vertical_cpu"
	ScalingPolicyTypeVerticalMem = "vertical_mem"
)

// The keys of a scaling policy's Target.
const (
	ScalingTargetNamespace = "Namespace"
	ScalingTargetJob       = "Job"
	ScalingTargetGroup     = "Group"
	ScalingTargetTask      = "Task"
)

// EvalTriggerScaling triggers the evaluation of a group's count change by
// a scaling request, as Nomad names it.
const EvalTriggerScaling = "job-scaling"

// JobTrackedScalingEvents is how many scaling events are kept per group,
// newest first, as in Nomad.
const JobTrackedScalingEvents = 20

// ScalingPolicy is a group's or a task's scaling block: the bounds an
// autoscaler (or `job scale`) keeps the group's count (or the task's
// resources) within, and the autoscaler's free-form policy. The server
// gives it an ID when the job is registered and keeps that ID across the
// job's versions.
type ScalingPolicy struct {
	ID string
	// Type is ScalingPolicyTypeHorizontal or a vertical type.
	Type string
	// Target says what the policy scales: Namespace, Job, Group (and Task
	// for vertical policies).
	Target map[string]string
	// Policy is the autoscaler's configuration, kept as written.
	Policy  map[string]any
	Min     int64
	Max     int64
	Enabled bool

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy of p; Policy's values are treated as immutable.
func (p *ScalingPolicy) Copy() *ScalingPolicy {
	if p == nil {
		return nil
	}
	c := *p
	c.Target = maps.Clone(p.Target)
	c.Policy = maps.Clone(p.Policy)
	return &c
}

// Validate checks the policy's bounds and type.
func (p *ScalingPolicy) Validate() error {
	switch p.Type {
	case ScalingPolicyTypeHorizontal, ScalingPolicyTypeVerticalCPU, ScalingPolicyTypeVerticalMem:
	default:
		return fmt.Errorf("scaling policy type %q is not one of %q, %q, %q", p.Type,
			ScalingPolicyTypeHorizontal, ScalingPolicyTypeVerticalCPU, ScalingPolicyTypeVerticalMem)
	}
	if p.Min < 0 {
		return fmt.Errorf("scaling min must not be negative, got %d", p.Min)
	}
	if p.Max < p.Min {
		return fmt.Errorf("scaling max (%d) is less than min (%d)", p.Max, p.Min)
	}
	return nil
}

// Stub is the policy as lists show it.
func (p *ScalingPolicy) Stub() *ScalingPolicyListStub {
	return &ScalingPolicyListStub{ID: p.ID, Type: p.Type, Enabled: p.Enabled, Target: maps.Clone(p.Target),
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// ScalingPolicyListStub is one entry of GET /v1/scaling/policies.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// ScalingEvent records one scaling request of a group: a count change, or
// a message (an autoscaler's error) without one.
type ScalingEvent struct {
	// Time is when the server received the request (Unix nanoseconds).
	Time int64
	// Count is the new count; nil for an event that changed nothing.
	Count         *int64
	PreviousCount int64
	Message       string
	Error         bool
	Meta          map[string]any
	// EvalID is the evaluation the count change created.
	EvalID      *string
	CreateIndex uint64
}

// ScalingPolicies returns the job's policies: each group's, then each of
// its tasks', in the job's order.
func (j *Job) ScalingPolicies() []*ScalingPolicy {
	var out []*ScalingPolicy
	for _, tg := range j.TaskGroups {
		if tg.Scaling != nil {
			out = append(out, tg.Scaling)
		}
		for _, t := range tg.Tasks {
			out = append(out, t.ScalingPolicies...)
		}
	}
	return out
}

// AdoptScaling completes the scaling policies of job, a new version of
// prev (nil for a new job): each policy gets its target, and the ID (and
// CreateIndex) of prev's policy for the same target and type, or a new ID.
// The scaling events of prev are carried over. index is the CreateIndex
// of new policies (ModifyIndex is set when the job is stored).
func (j *Job) AdoptScaling(prev *Job) {
	old := map[string]*ScalingPolicy{}
	if prev != nil {
		for _, p := range prev.ScalingPolicies() {
			old[policyKey(p)] = p
		}
		j.ScalingEvents = prev.ScalingEvents
	}
	for _, tg := range j.TaskGroups {
		set := func(p *ScalingPolicy, task string) {
			p.Target = map[string]string{
				ScalingTargetNamespace: j.Namespace, ScalingTargetJob: j.ID, ScalingTargetGroup: tg.Name,
			}
			if task != "" {
				p.Target[ScalingTargetTask] = task
			}
			if o := old[policyKey(p)]; o != nil {
				p.ID, p.CreateIndex = o.ID, o.CreateIndex
			} else if p.ID == "" {
				p.ID = GenerateUUID()
			}
		}
		if tg.Scaling != nil {
			set(tg.Scaling, "")
		}
		for _, t := range tg.Tasks {
			for _, p := range t.ScalingPolicies {
				set(p, t.Name)
			}
		}
	}
}

// policyKey identifies a policy across job versions.
func policyKey(p *ScalingPolicy) string {
	return p.Type + "\x00" + p.Target[ScalingTargetGroup] + "\x00" + p.Target[ScalingTargetTask]
}

// WithScalingEvent returns the job's events with e added first to group's,
// at most JobTrackedScalingEvents per group. The job is not changed.
func (j *Job) WithScalingEvent(group string, e *ScalingEvent) map[string][]*ScalingEvent {
	out := make(map[string][]*ScalingEvent, len(j.ScalingEvents)+1)
	maps.Copy(out, j.ScalingEvents)
	events := append([]*ScalingEvent{e}, j.ScalingEvents[group]...)
	if len(events) > JobTrackedScalingEvents {
		events = events[:JobTrackedScalingEvents]
	}
	out[group] = events
	return out
}

// JobScaleRequest is POST /v1/job/:id/scale: set a group's count (Count),
// or only record an event (Count nil, with a Message and maybe Error).
type JobScaleRequest struct {
	Namespace string
	JobID     string
	Group     string
	Count     *int64
	Message   string
	Error     bool
	Meta      map[string]any
	// PolicyOverride lets the count go outside the policy's bounds.
	PolicyOverride bool
	// EnforceIndex: scale only if the job's JobModifyIndex is
	// JobModifyIndex.
	EnforceIndex   bool
	JobModifyIndex uint64
	WriteRequest
}

// JobScaleStatusResponse is GET /v1/job/:id/scale.
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]TaskGroupScaleStatus
	QueryMeta
}

// TaskGroupScaleStatus is one group's count and allocations, with its
// scaling events, newest first.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []*ScalingEvent
}

// ScalingPolicyListRequest lists scaling policies; Job and Type filter
// them (Type by prefix, as Nomad: "vertical" matches both vertical types).
type ScalingPolicyListRequest struct {
	Job  string
	Type string
	QueryOptions
}

// ScalingPolicyListResponse holds the policies, sorted by ID.
type ScalingPolicyListResponse struct {
	Policies []*ScalingPolicyListStub
	QueryMeta
}

// ScalingPolicySpecificRequest reads one policy by ID.
type ScalingPolicySpecificRequest struct {
	ID string
	QueryOptions
}

// SingleScalingPolicyResponse holds one policy; nil when none has the ID.
type SingleScalingPolicyResponse struct {
	Policy *ScalingPolicy
	QueryMeta
}

// SortScalingStubs sorts stubs by ID.
func SortScalingStubs(stubs []*ScalingPolicyListStub) {
	sort.Slice(stubs, func(i, k int) bool { return stubs[i].ID < stubs[k].ID })
}

// validateGroupScaling checks a group's scaling policies: their bounds, and
// the group's count within its horizontal policy's.
func validateGroupScaling(name string, tg *TaskGroup, add func(string, ...any)) {
	if p := tg.Scaling; p != nil {
		if p.Type != ScalingPolicyTypeHorizontal {
			add("group %q: scaling policy type %q is invalid for a group: use %q", name, p.Type, ScalingPolicyTypeHorizontal)
		} else if err := p.Validate(); err != nil {
			add("group %q: %v", name, err)
		} else if c := int64(tg.Count); c < p.Min || c > p.Max {
			add("group %q: count %d is outside the scaling block's bounds [%d, %d]", name, tg.Count, p.Min, p.Max)
		}
	}
	for _, t := range tg.Tasks {
		seen := map[string]bool{}
		for _, p := range t.ScalingPolicies {
			if p.Type != ScalingPolicyTypeVerticalCPU && p.Type != ScalingPolicyTypeVerticalMem {
				add("group %q, task %q: scaling policy type %q is invalid for a task: use scaling \"cpu\" or \"mem\"", name, t.Name, p.Type)
				continue
			}
			if seen[p.Type] {
				add("group %q, task %q: two scaling policies of type %q", name, t.Name, p.Type)
			}
			seen[p.Type] = true
			if err := p.Validate(); err != nil {
				add("group %q, task %q: %v", name, t.Name, err)
			}
		}
	}
}
