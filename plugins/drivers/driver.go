package drivers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrTaskNotFound is returned for a task ID the driver does not know.
var ErrTaskNotFound = errors.New("task not found")

// ErrNotSupported is returned by an optional operation the driver lacks.
var ErrNotSupported = errors.New("operation not supported by this driver")

// DriverPlugin is the interface of a task driver. Every method must be safe
// for concurrent use. Methods that take a context must return promptly when
// it is cancelled; the caller also stops waiting when it is.
type DriverPlugin interface {
	// Name returns the driver's name as used in job files ("raw_exec").
	Name() string
	// Capabilities describes optional features.
	Capabilities() *Capabilities
	// Fingerprint streams the driver's health and attributes; the first
	// value is sent at once, later ones when something changes. The channel
	// closes when ctx is done.
	Fingerprint(ctx context.Context) (<-chan *Fingerprint, error)
	// StartTask starts a task and returns a handle the client persists.
	StartTask(ctx context.Context, cfg *TaskConfig) (*TaskHandle, error)
	// RecoverTask re-attaches to a task started before an agent restart.
	// It returns ErrTaskNotFound-wrapped errors when the task is gone.
	//
	// A handle without DriverState is a start intent: the client saved
	// the config before it called StartTask and the agent died before it
	// had the handle. A driver that can find the task from the config
	// alone re-attaches to it (also to one that exited: WaitTask reports
	// its exit); it returns an ErrTaskNotFound-wrapped error only when no
	// task was started for the config's ID and none will be, and the
	// client then starts the task. Any other error makes the client treat
	// the task as lost (its exit unknown).
	RecoverTask(ctx context.Context, h *TaskHandle) error
	// WaitTask returns a channel that receives the task's ExitResult once
	// and then closes. Cancelling ctx abandons the wait, not the task.
	WaitTask(ctx context.Context, taskID string) (<-chan *ExitResult, error)
	// StopTask sends signal (the driver's default when empty), waits up to
	// timeout for the task to exit, then kills it.
	StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error
	// DestroyTask releases the task's resources; with force it kills a
	// running task first, otherwise a running task is an error.
	DestroyTask(ctx context.Context, taskID string, force bool) error
	// InspectTask returns the task's current status.
	InspectTask(ctx context.Context, taskID string) (*TaskStatus, error)
	// SignalTask sends a signal ("SIGHUP") to the task.
	SignalTask(ctx context.Context, taskID string, signal string) error
	// TaskStats streams resource usage every interval until ctx is done.
	TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *TaskResourceUsage, error)
	// ExecTask runs a command in the task's context; may return ErrNotSupported.
	ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (*ExecTaskResult, error)
}

// Capabilities describes what a driver supports.
type Capabilities struct {
	SendSignals bool
	Exec        bool
	// FSIsolation is "none", "chroot" or "image".
	FSIsolation string
	// MountConfigs says whether the driver mounts TaskConfig.Mounts into
	// its tasks. The zero value, MountConfigSupportAll, is what a driver
	// that declares nothing gets.
	MountConfigs MountConfigSupport
	// MustInitiateNetwork says the driver makes the network namespace of
	// a bridge or CNI group it has a task in (DriverNetworkManager), as
	// docker's infra container does; false: the client makes it.
	MustInitiateNetwork bool
}

// MountConfigSupport is a driver's support for mounts (a task's
// volume_mount blocks, device plugins' mounts) in its tasks.
type MountConfigSupport int

const (
	// MountConfigSupportAll drivers mount every TaskConfig.Mounts entry.
	MountConfigSupportAll MountConfigSupport = iota
	// MountConfigSupportNone drivers cannot mount anything into their
	// tasks (raw_exec: no filesystem isolation). The server refuses a job
	// with volume_mount blocks for such a driver, the scheduler does not
	// place one on a node where the driver says so, and the client
	// refuses to start such a task rather than ignore its mounts.
	MountConfigSupportNone
)

// Health states of a driver.
const (
	HealthStateUndetected = "undetected"
	HealthStateUnhealthy  = "unhealthy"
	HealthStateHealthy    = "healthy"
)

// Fingerprint is a driver's report on itself.
type Fingerprint struct {
	Attributes        map[string]string
	Health            string
	HealthDescription string
}

// Task states as drivers report them.
const (
	TaskStateUnknown = "unknown"
	TaskStateRunning = "running"
	TaskStateExited  = "exited"
)

// TaskConfig is everything a driver needs to start a task.
type TaskConfig struct {
	// ID is unique per invocation: "<alloc id>/<task name>/<invocation id>".
	ID            string
	JobName       string
	JobID         string
	TaskGroupName string
	Name          string
	Namespace     string
	AllocID       string
	User          string
	Env           map[string]string
	Resources     *Resources
	// AllocDir is the alloc directory; TaskDir holds the task's paths.
	AllocDir string
	TaskDir  TaskDir
	// StdoutPath and StderrPath are where the driver writes the task's output.
	StdoutPath string
	StderrPath string
	// LogMaxFiles and LogMaxFileSizeMB bound rotated logs, where the driver
	// writes logs itself (0: not set).
	LogMaxFiles      int
	LogMaxFileSizeMB int
	// KillSignal is the task's kill_signal, used when StopTask gets none.
	KillSignal string
	// RawConfig is the task's driver config block as JSON.
	RawConfig json.RawMessage
	// Devices are host device nodes to expose to the task, as the device
	// plugins that reserved the task's devices asked; Mounts are host
	// paths to mount into it: the task's volume_mount blocks and what its
	// device plugins asked; nil: none. A driver without isolation
	// (raw_exec) ignores Devices (the device plugins' environment
	// variables are already in Env) and declares MountConfigSupportNone:
	// the client never gives it a task with Mounts.
	Devices []*DeviceConfig
	Mounts  []*MountConfig
	// NetworkMode is the task group's network mode as the group sets it
	// (structs.NetworkMode* values: "host", "none", "bridge" or
	// "cni/<name>"); "" when it sets
	// none, which is host networking. exec gives a task with "none" a
	// network namespace of its own with only loopback; docker maps an
	// explicit "none" or "host" to its network_mode when the task sets
	// none (else its default_network_mode applies); raw_exec ignores it
	// (its tasks always share the host's network).
	NetworkMode string
	// Ports are the host ports given to the task's allocation (its
	// group's network block), then those given to the task itself (an
	// older task-level network block), for drivers that publish them
	// (docker's ports = ["http"]); nil: none. The NOMAD_PORT_* variables
	// are already in Env.
	Ports []*PortMapping
	// NetworkIsolation is the allocation's network namespace, which the
	// client created and wired with CNI in "bridge" and "cni/<name>"
	// modes: every task of the group joins it (exec and raw_exec enter it
	// before exec; docker joins it through an infra container). nil: the
	// group has none.
	NetworkIsolation *NetworkIsolationSpec
}

// NetworkIsolationSpec is an allocation's network namespace: Path is its
// bind mount on the host, IP the allocation's address in it ("" when the
// CNI result gave none). Labels are what the driver that made the
// namespace set (DriverNetworkManager; NetworkLabel* keys), nil when the
// client made it. Hostname and DNS are the group network's (""/nil:
// none): the tasks' UTS hostname and resolv.conf.
type NetworkIsolationSpec struct {
	Path     string
	IP       string
	Labels   map[string]string
	Hostname string
	DNS      *DNSConfig
}

// PortMapping is a host port given to a task: Value on HostIP, reached in
// the task's network on To (0: Value).
type PortMapping struct {
	Label  string
	HostIP string
	Value  int
	To     int
}

// DeviceConfig is a host device node exposed to a task.
type DeviceConfig struct {
	// TaskPath is the node's path in the task; HostPath on the host.
	TaskPath string
	HostPath string
	// Permissions are cgroup permissions: "r", "w", "m" combined; empty
	// means "rwm".
	Permissions string
}

// MountConfig is a host path mounted into a task.
type MountConfig struct {
	// TaskPath is the absolute path inside the task; HostPath the host
	// path bound there (the operator's: a host volume's path, or a
	// device plugin's).
	TaskPath string
	HostPath string
	Readonly bool
}

// DecodeDriverConfig decodes the task's config block into out, rejecting
// unknown fields with an error that names them.
func (c *TaskConfig) DecodeDriverConfig(out any) error {
	if len(c.RawConfig) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytesReader(c.RawConfig))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("task %q: invalid driver config: %w", c.Name, err)
	}
	return nil
}

// TaskDir holds the paths of a task's directory tree.
type TaskDir struct {
	Dir        string // <alloc>/<task>
	LocalDir   string // <alloc>/<task>/local
	SecretsDir string // <alloc>/<task>/secrets
	SharedDir  string // <alloc>/alloc
	LogDir     string // <alloc>/alloc/logs
}

// Resources are a task's limits.
type Resources struct {
	CPUShares   int64 // MHz
	MemoryMB    int64
	MemoryMaxMB int64
}

// TaskHandle is what the client persists to re-attach to a task.
type TaskHandle struct {
	// Version lets a driver change DriverState's format.
	Version int
	Config  *TaskConfig
	State   string
	// DriverState is opaque to the client (e.g. shim address, pid).
	DriverState []byte
}

// ExitResult is how a task ended.
type ExitResult struct {
	ExitCode  int
	Signal    int
	OOMKilled bool
	// Err is set when the driver could not determine the exit.
	Err error
}

// Successful reports whether the task exited 0 without a signal or error.
func (r *ExitResult) Successful() bool {
	return r.ExitCode == 0 && r.Signal == 0 && r.Err == nil
}

// TaskStatus is a task's state as the driver sees it.
type TaskStatus struct {
	ID               string
	Name             string
	State            string
	StartedAt        time.Time
	CompletedAt      time.Time
	ExitResult       *ExitResult
	DriverAttributes map[string]string
}

// TaskResourceUsage is one sample of a task's resource use.
type TaskResourceUsage struct {
	Timestamp      int64 // Unix nanoseconds
	CPUPercent     float64
	CPUTotalTicks  float64
	MemoryRSS      uint64
	MemoryCache    uint64
	MemorySwap     uint64
	MemoryMaxUsage uint64
	Pids           map[string]*TaskResourceUsage `json:",omitempty"`
}

// ExecTaskResult is the outcome of ExecTask.
type ExecTaskResult struct {
	Stdout     []byte
	Stderr     []byte
	ExitResult *ExitResult
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
