package structs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Job types.
const (
	JobTypeService = "service"
	JobTypeBatch   = "batch"
	JobTypeSystem  = "system"
)

// Job statuses, derived from the job's allocations and evaluations.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Job defaults and limits.
const (
	DefaultNamespace   = "default"
	DefaultRegion      = "global"
	JobDefaultPriority = 50
	JobMinPriority     = 1
	JobMaxPriority     = 100
	DefaultKillTimeout = 5 * time.Second
)

// Job is the unit of work a user submits: a set of task groups to place.
// A Job read from the state store is read-only; use Copy before changing it.
type Job struct {
	Region      string
	Namespace   string
	ID          string
	Name        string
	Type        string
	Priority    int
	AllAtOnce   bool
	Datacenters []string
	// NodePool is the node pool the job's allocations are placed in
	// ("default" when not set; "all" places on every pool's nodes).
	NodePool    string
	Constraints []*Constraint
	// Affinities and Spreads rank the feasible nodes of every group
	// (placement.go).
	Affinities []*Affinity
	Spreads    []*Spread
	TaskGroups []*TaskGroup
	Meta       map[string]string
	// Update is the job-level update strategy; groups inherit it.
	Update *UpdateStrategy
	// Periodic makes the job a template launched on a cron schedule, and
	// ParameterizedJob one instantiated by dispatch (periodic.go).
	Periodic         *PeriodicConfig         `json:",omitempty"`
	ParameterizedJob *ParameterizedJobConfig `json:",omitempty"`

	// ParentID is the periodic or parameterized job this one was
	// launched from; Dispatched marks a dispatched child, with its
	// Payload and the idempotency token it was dispatched with.
	ParentID                 string
	Dispatched               bool
	Payload                  []byte
	DispatchIdempotencyToken string

	// Fields set by the server.
	Stop              bool
	Status            string
	StatusDescription string
	Stable            bool
	Version           uint64
	SubmitTime        int64
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64

	// ScalingEvents are the groups' scaling events, newest first
	// (scaling.go). They are carried from version to version and are not
	// part of the job's specification (GET /v1/job/:id/scale shows them).
	ScalingEvents map[string][]*ScalingEvent `codec:"ScalingEvents" json:"-"`
	// VersionTag names this version (version_tag.go); nil when untagged.
	VersionTag *JobVersionTag `json:",omitempty"`
}

// TaskGroup is a set of tasks placed together on one node, count times.
type TaskGroup struct {
	Name        string
	Count       int
	Constraints []*Constraint
	// Affinities and Spreads rank the group's feasible nodes, with the
	// job's (placement.go).
	Affinities    []*Affinity
	Spreads       []*Spread
	Tasks         []*Task
	RestartPolicy *RestartPolicy
	EphemeralDisk *EphemeralDisk
	Meta          map[string]string
	// Update is the group's update strategy (nil: replace all at once).
	Update *UpdateStrategy
	// Networks are the group's network blocks (network.go); nil: host
	// networking.
	Networks []*NetworkResource
	// ReschedulePolicy says when failed allocations are replaced (nil:
	// never; reschedule.go).
	ReschedulePolicy *ReschedulePolicy
	// Volumes are the group's volume blocks by name (volumes.go).
	Volumes map[string]*VolumeRequest
	// Services are the group's service blocks (services.go).
	Services []*Service `json:",omitempty"`
	// Scaling is the group's scaling block (scaling.go): the bounds of
	// its count.
	Scaling *ScalingPolicy `json:",omitempty"`
	// Migrate says how the group's allocations move off a draining node
	// (node_drain.go); nil for jobs other than services.
	Migrate *MigrateStrategy `json:",omitempty"`
	// Disconnect says what happens to the group's allocations while
	// their node is unreachable (disconnect.go); nil: they are lost.
	Disconnect *DisconnectStrategy `json:",omitempty"`
}

// Task is a single process, container or other unit run by a driver.
type Task struct {
	Name        string
	Driver      string
	User        string
	Config      map[string]any
	Env         map[string]string
	Constraints []*Constraint
	// Affinities rank the nodes of the task's group, with the group's.
	Affinities []*Affinity
	Resources  *Resources
	// RestartPolicy is the effective policy: the group's merged with the task's.
	RestartPolicy *RestartPolicy
	Meta          map[string]string
	KillTimeout   time.Duration
	KillSignal    string
	Leader        bool
	Lifecycle     *TaskLifecycle
	LogConfig     *LogConfig
	// Artifacts are fetched into the task's directory before it starts
	// (artifact.go).
	Artifacts []*TaskArtifact
	// VolumeMounts are the task's volume_mount blocks (volumes.go).
	VolumeMounts []*VolumeMount
	// Services are the task's service blocks (services.go).
	Services []*Service `json:",omitempty"`
	// Templates are rendered into the task's directory before it starts
	// and again when what they read changes (template.go).
	Templates []*Template
	// Identity is the task's unnamed identity block (its default
	// workload identity); Identities its named ones (identity.go).
	Identity   *TaskIdentity   `json:",omitempty"`
	Identities []*TaskIdentity `json:",omitempty"`
	// ScalingPolicies are the task's scaling "cpu"|"mem" blocks, kept for
	// an external vertical autoscaler (scaling.go).
	ScalingPolicies []*ScalingPolicy `json:",omitempty"`
	// DispatchPayload says where a dispatched job's payload is written
	// in the task's local/ directory (periodic.go).
	DispatchPayload *DispatchPayloadConfig `json:",omitempty"`
}

// Lifecycle hooks of a task.
const (
	TaskLifecycleHookPrestart  = "prestart"
	TaskLifecycleHookPoststart = "poststart"
	TaskLifecycleHookPoststop  = "poststop"
)

// TaskLifecycle makes a task run before, beside or after the main tasks.
type TaskLifecycle struct {
	Hook    string
	Sidecar bool
}

// LogConfig bounds a task's log files.
type LogConfig struct {
	MaxFiles      int
	MaxFileSizeMB int
	Disabled      bool
}

// DefaultLogConfig returns Nomad's defaults: 10 files of 10 MB.
func DefaultLogConfig() *LogConfig { return &LogConfig{MaxFiles: 10, MaxFileSizeMB: 10} }

// Resources a task asks for, or a total of several.
type Resources struct {
	CPU         int // MHz
	Cores       int
	MemoryMB    int
	MemoryMaxMB int
	DiskMB      int
	Devices     []*RequestedDevice
	// Networks is the task-level network block of older jobs (Nomad's
	// resources { network { port ... } }); groups use TaskGroup.Networks.
	Networks []*NetworkResource `json:",omitempty"`
}

// Defaults for task resources, as in Nomad.
const (
	DefaultResourcesCPU      = 100
	DefaultResourcesMemoryMB = 300
	MinResourcesCPU          = 1
	MinResourcesMemoryMB     = 10
)

// DefaultResources returns the resources of a task that asks for none.
func DefaultResources() *Resources {
	return &Resources{CPU: DefaultResourcesCPU, MemoryMB: DefaultResourcesMemoryMB}
}

// Add adds o to r.
func (r *Resources) Add(o *Resources) {
	if o == nil {
		return
	}
	r.CPU += o.CPU
	r.Cores += o.Cores
	r.MemoryMB += o.MemoryMB
	r.MemoryMaxMB += o.MemoryMaxMB
	r.DiskMB += o.DiskMB
}

// Copy returns a copy of r.
func (r *Resources) Copy() *Resources {
	if r == nil {
		return nil
	}
	c := *r
	if r.Devices != nil {
		c.Devices = make([]*RequestedDevice, len(r.Devices))
		for i, d := range r.Devices {
			c.Devices[i] = d.Copy()
		}
	}
	c.Networks = copyNetworks(r.Networks)
	return &c
}

// Restart policy modes.
const (
	RestartPolicyModeFail  = "fail"
	RestartPolicyModeDelay = "delay"
)

// RestartPolicy says how a task that exits is restarted on the same node.
type RestartPolicy struct {
	Attempts int
	Interval time.Duration
	Delay    time.Duration
	Mode     string
}

// DefaultRestartPolicy returns Nomad's default restart policy for a job type.
func DefaultRestartPolicy(jobType string) *RestartPolicy {
	if jobType == JobTypeBatch || jobType == JobTypeSysBatch {
		return &RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
	}
	return &RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
}

// Copy returns a copy of p.
func (p *RestartPolicy) Copy() *RestartPolicy {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// EphemeralDisk is the group's scratch space on the node.
type EphemeralDisk struct {
	Sticky  bool
	Migrate bool
	SizeMB  int
}

// DefaultEphemeralDisk returns Nomad's default: 300 MB, not sticky.
func DefaultEphemeralDisk() *EphemeralDisk { return &EphemeralDisk{SizeMB: 300} }

// Constraint operands.
const (
	ConstraintEqual            = "="
	ConstraintNotEqual         = "!="
	ConstraintRegex            = "regexp"
	ConstraintVersion          = "version"
	ConstraintSetContains      = "set_contains"
	ConstraintSetContainsAll   = "set_contains_all"
	ConstraintSetContainsAny   = "set_contains_any"
	ConstraintSemver           = "semver"
	ConstraintDistinctProperty = "distinct_property"
	ConstraintAttributeIsSet   = "is_set"
	ConstraintAttributeNotSet  = "is_not_set"
	ConstraintDistinctHosts    = "distinct_hosts"
	ConstraintLessThan         = "<"
	ConstraintLessEqual        = "<="
	ConstraintGreaterThan      = ">"
	ConstraintGreaterEqual     = ">="
)

// Constraint restricts the nodes a job, group or task may be placed on.
// LTarget and RTarget may hold ${node.*}, ${attr.*} or ${meta.*} references.
type Constraint struct {
	LTarget string
	RTarget string
	Operand string
}

// String renders the constraint as it reads in a job file.
func (c *Constraint) String() string {
	return fmt.Sprintf("%s %s %s", c.LTarget, c.Operand, c.RTarget)
}

// LookupTaskGroup returns the named group, or nil.
func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	for _, tg := range j.TaskGroups {
		if tg.Name == name {
			return tg
		}
	}
	return nil
}

// LookupTask returns the named task, or nil.
func (tg *TaskGroup) LookupTask(name string) *Task {
	for _, t := range tg.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Stopped reports whether the job has been stopped (deregistered without purge).
func (j *Job) Stopped() bool { return j == nil || j.Stop }

// NamespacedID returns the job's key in the state store.
func (j *Job) NamespacedID() NamespacedID { return NamespacedID{Namespace: j.Namespace, ID: j.ID} }

// NamespacedID is an object ID qualified by its namespace.
type NamespacedID struct {
	Namespace string
	ID        string
}

// String renders the ID as "id@namespace".
func (n NamespacedID) String() string { return n.ID + "@" + n.Namespace }

// Canonicalize fills in defaults for unset fields. It is idempotent.
func (j *Job) Canonicalize() {
	if j.Namespace == "" {
		j.Namespace = DefaultNamespace
	}
	if j.Region == "" {
		j.Region = DefaultRegion
	}
	if j.Name == "" {
		j.Name = j.ID
	}
	if j.Type == "" {
		j.Type = JobTypeService
	}
	if j.Priority == 0 {
		j.Priority = JobDefaultPriority
	}
	if len(j.Datacenters) == 0 {
		j.Datacenters = []string{"*"}
	}
	if j.Periodic != nil {
		j.Periodic.Canonicalize()
	}
	if j.ParameterizedJob != nil {
		j.ParameterizedJob.Canonicalize()
	}
	for _, tg := range j.TaskGroups {
		if tg.RestartPolicy == nil {
			tg.RestartPolicy = DefaultRestartPolicy(j.Type)
		}
		if tg.EphemeralDisk == nil {
			tg.EphemeralDisk = DefaultEphemeralDisk()
		}
		if tg.ReschedulePolicy == nil {
			tg.ReschedulePolicy = DefaultReschedulePolicy(j.Type)
		}
		for _, s := range tg.Services {
			if s != nil {
				s.Canonicalize("")
			}
		}
		for _, t := range tg.Tasks {
			if t.Resources == nil {
				t.Resources = DefaultResources()
			}
			if t.RestartPolicy == nil {
				t.RestartPolicy = tg.RestartPolicy.Copy()
			}
			if t.KillTimeout == 0 {
				t.KillTimeout = DefaultKillTimeout
			}
			if t.LogConfig == nil {
				t.LogConfig = DefaultLogConfig()
			}
			for _, a := range t.Artifacts {
				if a != nil {
					a.Canonicalize()
				}
			}
			for _, s := range t.Services {
				if s != nil {
					s.Canonicalize(t.Name)
				}
			}
			for _, tmpl := range t.Templates {
				if tmpl != nil {
					tmpl.Canonicalize()
				}
			}
		}
	}
}

// Validate checks a canonicalized job and returns every problem found,
// joined, each naming the group and task it concerns. The error is KindInvalid.
func (j *Job) Validate() error {
	errs := j.nameErrors()
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if j.ID == "" {
		add("job ID is missing")
	}
	switch j.Type {
	case JobTypeService, JobTypeBatch, JobTypeSystem, JobTypeSysBatch:
	default:
		add("job type %q is invalid: use service, batch, system or sysbatch", j.Type)
	}
	errs = append(errs, j.validateJobKinds()...) // periodic.go
	if j.Priority < JobMinPriority || j.Priority > JobMaxPriority {
		add("job priority %d is out of range [%d, %d]", j.Priority, JobMinPriority, JobMaxPriority)
	}
	if len(j.TaskGroups) == 0 {
		add("job has no task groups: add a group block")
	}
	validatePlacement("job", j.Affinities, j.Spreads, add)
	groups := map[string]bool{}
	for i, tg := range j.TaskGroups {
		name := tg.Name
		if name == "" {
			add("group %d has no name", i+1)
			name = fmt.Sprintf("#%d", i+1)
		}
		if groups[name] {
			add("group %q is defined twice", name)
		}
		groups[name] = true
		if tg.Count < 0 {
			add("group %q: count %d must not be negative", name, tg.Count)
		}
		validateGroupScaling(name, tg, add) // scaling.go
		if rp := tg.RestartPolicy; rp != nil {
			if err := rp.Validate(); err != nil {
				add("group %q: %v", name, err)
			}
		}
		if len(tg.Tasks) == 0 {
			add("group %q has no tasks: add a task block", name)
		}
		validatePlacement(fmt.Sprintf("group %q", name), tg.Affinities, tg.Spreads, add)
		tasks := map[string]bool{}
		leaders := 0
		for k, t := range tg.Tasks {
			tname := t.Name
			if tname == "" {
				add("group %q: task %d has no name", name, k+1)
				tname = fmt.Sprintf("#%d", k+1)
			}
			if tasks[tname] {
				add("group %q: task %q is defined twice", name, tname)
			}
			tasks[tname] = true
			if t.Leader {
				leaders++
			}
			if t.Driver == "" {
				add("group %q, task %q: driver is missing", name, tname)
			}
			if r := t.Resources; r != nil {
				if r.CPU < MinResourcesCPU && r.Cores == 0 {
					add("group %q, task %q: cpu %d is below the minimum of %d MHz", name, tname, r.CPU, MinResourcesCPU)
				}
				if r.MemoryMB < MinResourcesMemoryMB {
					add("group %q, task %q: memory %d MB is below the minimum of %d MB", name, tname, r.MemoryMB, MinResourcesMemoryMB)
				}
			}
			if t.KillTimeout < 0 {
				add("group %q, task %q: kill_timeout must not be negative", name, tname)
			}
			validatePlacement(fmt.Sprintf("group %q, task %q", name, tname), t.Affinities, nil, add)
			for i, a := range t.Artifacts {
				if a == nil {
					add("group %q, task %q, artifact %d is empty", name, tname, i+1)
					continue
				}
				if err := a.Validate(); err != nil {
					add("group %q, task %q, artifact %d: %v", name, tname, i+1, err)
				}
			}
			validateTemplates(fmt.Sprintf("group %q, task %q", name, tname), t.Templates, add)
			if err := ValidateTaskIdentities(t); err != nil {
				add("group %q: %v", name, err)
			}
			if lc := t.Lifecycle; lc != nil {
				switch lc.Hook {
				case TaskLifecycleHookPrestart, TaskLifecycleHookPoststart, TaskLifecycleHookPoststop:
				default:
					add("group %q, task %q: lifecycle hook %q is invalid: use prestart, poststart or poststop", name, tname, lc.Hook)
				}
			}
		}
		if leaders > 1 {
			add("group %q has %d leader tasks: at most one is allowed", name, leaders)
		}
		errs = append(errs, tg.networkErrors(name)...)  // network_validate.go
		errs = append(errs, tg.volumeErrors(name)...)   // volumes.go
		errs = append(errs, tg.servicesErrors(name)...) // services.go
	}
	errs = append(errs, j.validateFreeform()...) // limits.go
	if len(errs) == 0 {
		return nil
	}
	return &KindError{Kind: KindInvalid, Msg: errors.Join(errs...).Error()}
}

// Validate checks the restart policy's values.
func (p *RestartPolicy) Validate() error {
	switch p.Mode {
	case RestartPolicyModeFail, RestartPolicyModeDelay:
	default:
		return fmt.Errorf("restart mode %q is invalid: use fail or delay", p.Mode)
	}
	if p.Attempts < 0 {
		return fmt.Errorf("restart attempts %d must not be negative", p.Attempts)
	}
	if p.Delay < 0 || p.Interval < 0 {
		return errors.New("restart delay and interval must not be negative")
	}
	if p.Attempts > 0 && p.Interval > 0 && time.Duration(p.Attempts)*p.Delay > p.Interval {
		return fmt.Errorf("restart: %d attempts with a %s delay do not fit in the %s interval", p.Attempts, p.Delay, p.Interval)
	}
	return nil
}

// Copy returns a deep copy of the job.
func (j *Job) Copy() *Job {
	if j == nil {
		return nil
	}
	c := *j
	c.Datacenters = slices.Clone(j.Datacenters)
	c.Constraints = copyConstraints(j.Constraints)
	c.Affinities = copyAffinities(j.Affinities)
	c.Spreads = copySpreads(j.Spreads)
	c.Meta = maps.Clone(j.Meta)
	c.Update = j.Update.Copy()
	c.ScalingEvents = maps.Clone(j.ScalingEvents) // events are immutable
	if j.VersionTag != nil {
		t := *j.VersionTag
		c.VersionTag = &t
	}
	c.Periodic = j.Periodic.Copy()
	c.ParameterizedJob = j.ParameterizedJob.Copy()
	c.Payload = slices.Clone(j.Payload)
	c.TaskGroups = make([]*TaskGroup, len(j.TaskGroups))
	for i, tg := range j.TaskGroups {
		c.TaskGroups[i] = tg.Copy()
	}
	return &c
}

// Copy returns a deep copy of the group.
func (tg *TaskGroup) Copy() *TaskGroup {
	if tg == nil {
		return nil
	}
	c := *tg
	c.Constraints = copyConstraints(tg.Constraints)
	c.Affinities = copyAffinities(tg.Affinities)
	c.Spreads = copySpreads(tg.Spreads)
	c.RestartPolicy = tg.RestartPolicy.Copy()
	c.ReschedulePolicy = tg.ReschedulePolicy.Copy()
	if tg.EphemeralDisk != nil {
		d := *tg.EphemeralDisk
		c.EphemeralDisk = &d
	}
	c.Meta = maps.Clone(tg.Meta)
	c.Update = tg.Update.Copy()
	if tg.Migrate != nil {
		m := *tg.Migrate
		c.Migrate = &m
	}
	c.Disconnect = tg.Disconnect.Copy()
	if tg.Networks != nil {
		c.Networks = make([]*NetworkResource, len(tg.Networks))
		for i, n := range tg.Networks {
			c.Networks[i] = n.Copy()
		}
	}
	c.Volumes = copyVolumes(tg.Volumes)
	c.Services = copyServices(tg.Services)
	c.Scaling = tg.Scaling.Copy()
	c.Tasks = make([]*Task, len(tg.Tasks))
	for i, t := range tg.Tasks {
		c.Tasks[i] = t.Copy()
	}
	return &c
}

// Copy returns a deep copy of the task. Config values are copied one level
// deep; nested values are treated as immutable.
func (t *Task) Copy() *Task {
	if t == nil {
		return nil
	}
	c := *t
	c.Config = maps.Clone(t.Config)
	c.Env = maps.Clone(t.Env)
	c.Constraints = copyConstraints(t.Constraints)
	c.Affinities = copyAffinities(t.Affinities)
	c.Resources = t.Resources.Copy()
	c.RestartPolicy = t.RestartPolicy.Copy()
	c.Meta = maps.Clone(t.Meta)
	if t.Lifecycle != nil {
		l := *t.Lifecycle
		c.Lifecycle = &l
	}
	if t.LogConfig != nil {
		l := *t.LogConfig
		c.LogConfig = &l
	}
	c.Artifacts = copyArtifacts(t.Artifacts)
	c.VolumeMounts = copyVolumeMounts(t.VolumeMounts)
	c.Services = copyServices(t.Services)
	c.Templates = copyTemplates(t.Templates)
	c.Identity, c.Identities = copyTaskIdentity(t.Identity), nil
	for _, id := range t.Identities {
		c.Identities = append(c.Identities, copyTaskIdentity(id))
	}
	if t.ScalingPolicies != nil {
		c.ScalingPolicies = make([]*ScalingPolicy, len(t.ScalingPolicies))
		for i, p := range t.ScalingPolicies {
			c.ScalingPolicies[i] = p.Copy()
		}
	}
	if t.DispatchPayload != nil {
		d := *t.DispatchPayload
		c.DispatchPayload = &d
	}
	return &c
}

func copyConstraints(cs []*Constraint) []*Constraint {
	if cs == nil {
		return nil
	}
	out := make([]*Constraint, len(cs))
	for i, c := range cs {
		cc := *c
		out[i] = &cc
	}
	return out
}

// IsPrestart reports whether the task runs in the prestart phase.
func (t *Task) IsPrestart() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPrestart
}

// IsPoststart reports whether the task runs in the poststart phase.
func (t *Task) IsPoststart() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPoststart
}

// IsPoststop reports whether the task runs after the main tasks stopped.
func (t *Task) IsPoststop() bool {
	return t.Lifecycle != nil && t.Lifecycle.Hook == TaskLifecycleHookPoststop
}

// IsMain reports whether the task is a main task (no lifecycle hook).
func (t *Task) IsMain() bool { return t.Lifecycle == nil || t.Lifecycle.Hook == "" }

// IsSidecar reports whether the task keeps running beside the main tasks.
func (t *Task) IsSidecar() bool { return t.Lifecycle != nil && t.Lifecycle.Sidecar }

// JobListStub is the summary of a job returned by GET /v1/jobs.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	Meta              map[string]string `json:",omitempty"`
}

// JobSummary counts a job's allocations by client status, per group.
type JobSummary struct {
	JobID       string
	Namespace   string
	Summary     map[string]TaskGroupSummary
	CreateIndex uint64
	ModifyIndex uint64
}

// TaskGroupSummary counts one group's allocations by client status.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}

// Stub returns the list form of the job; summary may be nil.
func (j *Job) Stub(summary *JobSummary) *JobListStub {
	return &JobListStub{
		ID:                j.ID,
		ParentID:          j.ParentID,
		Periodic:          j.IsPeriodic(),
		ParameterizedJob:  j.IsParameterized(),
		Name:              j.Name,
		Namespace:         j.Namespace,
		Datacenters:       j.Datacenters,
		NodePool:          NodePoolName(j.NodePool),
		Type:              j.Type,
		Priority:          j.Priority,
		Stop:              j.Stop,
		Status:            j.Status,
		StatusDescription: j.StatusDescription,
		JobSummary:        summary,
		CreateIndex:       j.CreateIndex,
		ModifyIndex:       j.ModifyIndex,
		JobModifyIndex:    j.JobModifyIndex,
		SubmitTime:        j.SubmitTime,
		Meta:              j.Meta,
	}
}
