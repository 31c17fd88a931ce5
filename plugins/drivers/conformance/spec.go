package conformance

import (
	"encoding/json"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// Spec tells the harness how to make the driver's tasks and which optional
// checks to run. The three task configs are the driver's config block as
// JSON (drivers.TaskConfig.RawConfig).
type Spec struct {
	// RunForever is a task that runs until stopped, and ignores Signal.
	RunForever json.RawMessage
	// ExitZero is a task that exits 0 soon after starting.
	ExitZero json.RawMessage
	// ExitThree is a task that exits with code 3 soon after starting.
	ExitThree json.RawMessage

	// Signal is sent by the signal check to a RunForever task, which must
	// survive it; default "SIGWINCH" (ignored by most programs).
	Signal string
	// ExecCommand is run by the exec check in a RunForever task and must
	// exit 0; nil skips the check. It also runs only when the driver's
	// Capabilities say Exec.
	ExecCommand []string
	// ExecEchoCommand is run by the streaming exec check (for a driver
	// that is a drivers.ExecStreamingPlugin) in a RunForever task: it must
	// copy its stdin to its stdout and exit 0 at the end of its input
	// ("cat"); nil skips the check.
	ExecEchoCommand []string

	// SkipSignal, SkipStats and SkipRecover skip those checks for a
	// driver that lacks the feature. The signal check also runs only when
	// the driver's Capabilities say SendSignals.
	SkipSignal  bool
	SkipStats   bool
	SkipRecover bool

	// Timeout bounds each wait of the harness (a task's start, exit,
	// stop, a stream's first value); default 30s.
	Timeout time.Duration
	// StopTimeout is the timeout passed to StopTask; default 5s.
	StopTimeout time.Duration

	// Adjust, if set, changes every TaskConfig the harness builds (a
	// user, resources, an image) before it is started.
	Adjust func(*drivers.TaskConfig)
}

func (s *Spec) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 30 * time.Second
}

func (s *Spec) stopTimeout() time.Duration {
	if s.StopTimeout > 0 {
		return s.StopTimeout
	}
	return 5 * time.Second
}

func (s *Spec) signal() string {
	if s.Signal != "" {
		return s.Signal
	}
	return "SIGWINCH"
}
