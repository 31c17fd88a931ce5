package api

import (
	"encoding/json"
	"time"
)

// Job is a job as submitted over the HTTP API (`PUT /v1/jobs`) and as
// produced by the job file parser. Pointer fields distinguish "not set" from
// zero values; the server fills in defaults.
//
// Fields that Nomad defines but drover does not implement are kept as raw
// JSON so that requests from Nomad's clients (which send them, usually as
// null) decode; the agent rejects or warns about those that are set.
type Job struct {
	Region      *string
	Namespace   *string
	ID          *string
	Name        *string
	Type        *string
	Priority    *int
	AllAtOnce   *bool
	Datacenters []string
	Constraints []*Constraint
	TaskGroups  []*TaskGroup
	Meta        map[string]string
	// Update is the job-level update strategy; groups inherit it.
	Update *UpdateStrategy `json:",omitempty"`
	// Affinities and Spreads rank the nodes of every group.
	Affinities []*Affinity `json:",omitempty"`
	Spreads    []*Spread   `json:",omitempty"`

	// Periodic launches the job as child jobs on a cron schedule;
	// ParameterizedJob makes it a template for `job dispatch`
	// (periodic.go).
	Periodic         *PeriodicConfig         `json:",omitempty"`
	ParameterizedJob *ParameterizedJobConfig `json:",omitempty"`

	// Set by the server; ignored on submission.
	ParentID                 *string `json:",omitempty"`
	Dispatched               bool    `json:",omitempty"`
	Payload                  []byte  `json:",omitempty"`
	DispatchIdempotencyToken *string `json:",omitempty"`
	Stop                     *bool
	Status                   *string
	StatusDescription        *string
	Stable                   *bool
	Version                  *uint64
	SubmitTime               *int64
	CreateIndex              *uint64
	ModifyIndex              *uint64
	JobModifyIndex           *uint64

	// Nomad fields drover does not implement (yet).
	NodePool        json.RawMessage   `json:",omitempty"`
	Multiregion     json.RawMessage   `json:",omitempty"`
	Reschedule      *ReschedulePolicy `json:",omitempty"` // merged into every group's policy
	Migrate         json.RawMessage   `json:",omitempty"`
	UI              json.RawMessage   `json:",omitempty"`
	ConsulNamespace json.RawMessage   `json:",omitempty"`
	VaultNamespace  json.RawMessage   `json:",omitempty"`
	NomadTokenID    json.RawMessage   `json:",omitempty"`
	VersionTag      json.RawMessage   `json:",omitempty"`
}

// TaskGroup is a group of tasks placed together, Count times.
type TaskGroup struct {
	Name          *string
	Count         *int
	Constraints   []*Constraint
	Tasks         []*Task
	RestartPolicy *RestartPolicy
	EphemeralDisk *EphemeralDisk
	Meta          map[string]string
	// Update overrides the job's update strategy for this group.
	Update *UpdateStrategy `json:",omitempty"`
	// Networks is the group's network block (mode, ports).
	Networks []*NetworkResource `json:",omitempty"`
	// Affinities and Spreads rank the group's nodes, with the job's.
	Affinities []*Affinity `json:",omitempty"`
	Spreads    []*Spread   `json:",omitempty"`
	// Volumes are the group's volume blocks, by name (volumes.go).
	Volumes map[string]*VolumeRequest `json:",omitempty"`
	// Services are the group's service blocks (services.go).
	Services []*Service `json:",omitempty"`

	// Nomad fields drover does not implement (yet).
	Disconnect                json.RawMessage   `json:",omitempty"`
	ReschedulePolicy          *ReschedulePolicy `json:",omitempty"` // overrides the job's Reschedule
	Migrate                   json.RawMessage   `json:",omitempty"`
	ShutdownDelay             json.RawMessage   `json:",omitempty"`
	MaxRunDuration            json.RawMessage   `json:",omitempty"`
	StopAfterClientDisconnect json.RawMessage   `json:",omitempty"`
	MaxClientDisconnect       json.RawMessage   `json:",omitempty"`
	Scaling                   json.RawMessage   `json:",omitempty"`
	Consul                    json.RawMessage   `json:",omitempty"`
	PreventRescheduleOnLost   json.RawMessage   `json:",omitempty"`
}

// Task is one unit of work run by a driver.
type Task struct {
	Name          string
	Driver        string
	User          string
	Lifecycle     *TaskLifecycle
	Config        map[string]any
	Constraints   []*Constraint
	Env           map[string]string
	Resources     *Resources
	RestartPolicy *RestartPolicy
	Meta          map[string]string
	KillTimeout   *time.Duration
	LogConfig     *LogConfig
	Leader        bool
	KillSignal    string
	// Affinities rank the nodes of the task's group, with the group's.
	Affinities []*Affinity `json:",omitempty"`
	// Artifacts are fetched into the task's directory before it starts.
	Artifacts []*TaskArtifact `json:",omitempty"`
	// VolumeMounts are the task's volume_mount blocks (volumes.go).
	VolumeMounts []*VolumeMount `json:",omitempty"`
	// Services are the task's service blocks (services.go).
	Services []*Service `json:",omitempty"`
	// Templates are rendered into the task's directory before it starts.
	Templates []*Template `json:",omitempty"`
	// DispatchPayload writes a dispatched job's payload into the task's
	// local/ directory.
	DispatchPayload *DispatchPayloadConfig `json:",omitempty"`

	// Nomad fields drover does not implement (yet).
	Vault           json.RawMessage `json:",omitempty"`
	Consul          json.RawMessage `json:",omitempty"`
	CSIPluginConfig json.RawMessage `json:",omitempty"`
	ShutdownDelay   json.RawMessage `json:",omitempty"`
	Kind            json.RawMessage `json:",omitempty"`
	ScalingPolicies json.RawMessage `json:",omitempty"`
	Secrets         json.RawMessage `json:",omitempty"`
	Identity        json.RawMessage `json:",omitempty"`
	Identities      json.RawMessage `json:",omitempty"`
	Actions         json.RawMessage `json:",omitempty"`
	Schedule        json.RawMessage `json:",omitempty"`
}

// UpdateStrategy says how a service job's allocations are replaced when
// the job changes (the update block). Unset fields take Nomad's defaults.
type UpdateStrategy struct {
	Stagger          *time.Duration `json:",omitempty"`
	MaxParallel      *int           `json:",omitempty"`
	HealthCheck      *string        `json:",omitempty"`
	MinHealthyTime   *time.Duration `json:",omitempty"`
	HealthyDeadline  *time.Duration `json:",omitempty"`
	ProgressDeadline *time.Duration `json:",omitempty"`
	Canary           *int           `json:",omitempty"`
	AutoRevert       *bool          `json:",omitempty"`
	AutoPromote      *bool          `json:",omitempty"`
}

// TaskLifecycle runs a task before, beside or after the main tasks.
type TaskLifecycle struct {
	Hook    string
	Sidecar bool
}

// Constraint restricts placement. In job files: attribute, operator, value.
type Constraint struct {
	LTarget string
	RTarget string
	Operand string
}

// Resources a task asks for. CPU in MHz, memory in MB.
type Resources struct {
	CPU         *int
	Cores       *int
	MemoryMB    *int
	MemoryMaxMB *int
	DiskMB      *int

	// Networks is the task-level network block of older jobs (ports).
	Networks []*NetworkResource `json:",omitempty"`

	// Nomad fields drover does not implement (yet).
	Devices   json.RawMessage `json:",omitempty"`
	NUMA      json.RawMessage `json:",omitempty"`
	SecretsMB json.RawMessage `json:",omitempty"`
	IOPS      json.RawMessage `json:",omitempty"`
}

// RestartPolicy says how a failed task is restarted in place.
type RestartPolicy struct {
	Interval        *time.Duration
	Attempts        *int
	Delay           *time.Duration
	Mode            *string
	RenderTemplates json.RawMessage `json:",omitempty"`
}

// EphemeralDisk is the group's scratch space.
type EphemeralDisk struct {
	Sticky  *bool
	Migrate *bool
	SizeMB  *int
}

// LogConfig bounds a task's log files.
type LogConfig struct {
	MaxFiles      *int
	MaxFileSizeMB *int
	Enabled       *bool
	Disabled      *bool `json:",omitempty"`
}

// JobRegisterRequest is the body of `PUT /v1/jobs`.
type JobRegisterRequest struct {
	Job            *Job
	EnforceIndex   bool   `json:",omitempty"`
	JobModifyIndex uint64 `json:",omitempty"`

	// Accepted for compatibility with Nomad's clients.
	Submission        json.RawMessage `json:",omitempty"`
	PolicyOverride    bool            `json:",omitempty"`
	PreserveCounts    bool            `json:",omitempty"`
	PreserveResources bool            `json:",omitempty"`
	EvalPriority      int             `json:",omitempty"`
	Region            string          `json:",omitempty"`
	Namespace         string          `json:",omitempty"`
	SecretID          string          `json:",omitempty"`
}

// JobRegisterResponse is the answer to a job registration.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
}

// JobDeregisterResponse is the answer to `DELETE /v1/job/:id`.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
}

// JobsParseRequest is the body of `POST /v1/jobs/parse`.
type JobsParseRequest struct {
	JobHCL       string
	Canonicalize bool              `json:",omitempty"`
	Variables    string            `json:",omitempty"`
	HCLv1        bool              `json:",omitempty"`
	VarFlags     map[string]string `json:",omitempty"`
}

// String returns a pointer to s, for building Jobs in code.
func String(s string) *string { return &s }

// Int returns a pointer to i.
func Int(i int) *int { return &i }

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }

// Duration returns a pointer to d.
func Duration(d time.Duration) *time.Duration { return &d }

// ReschedulePolicy says when allocations that failed on their client are
// replaced, possibly on another node (the `reschedule` block). Durations
// are nanoseconds on the wire. Fields are in alphabetical order so that the
// encoding matches the jobspec's canonical JSON.
type ReschedulePolicy struct {
	Attempts      *int           `json:",omitempty"`
	Delay         *time.Duration `json:",omitempty"`
	DelayFunction *string        `json:",omitempty"`
	Interval      *time.Duration `json:",omitempty"`
	MaxDelay      *time.Duration `json:",omitempty"`
	Unlimited     *bool          `json:",omitempty"`
}
