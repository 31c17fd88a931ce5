package mock

import (
	"encoding/json"
	"fmt"
	"time"
)

// TaskConfig is the mock driver's config block; see the package doc for
// what each field does.
type TaskConfig struct {
	RunFor     Duration `json:"run_for"`      // 0: exit at once, as Nomad's mock
	ExitCode   int      `json:"exit_code"`    // when run_for elapses
	ExitSignal int      `json:"exit_signal"`  // when run_for elapses
	ExitErrMsg string   `json:"exit_err_msg"` // ExitResult.Err when run_for elapses

	StartErr            string   `json:"start_error"`             // StartTask fails with it
	StartErrRecoverable bool     `json:"start_error_recoverable"` // as a recoverable error
	StartBlockFor       Duration `json:"start_block_for"`         // StartTask blocks this long

	KillAfter Duration `json:"kill_after"`   // exit this long after StopTask's signal
	SignalErr string   `json:"signal_error"` // SignalTask fails with it

	StdoutString         string   `json:"stdout_string"`          // written to StdoutPath at start
	StdoutRepeat         int      `json:"stdout_repeat"`          // extra writes ...
	StdoutRepeatDuration Duration `json:"stdout_repeat_duration"` // ... this far apart

	ExecCommand *ExecCommand `json:"exec_command"` // what ExecTask does

	// WaitNeverReturns (drover extension) makes WaitTask's channel never
	// deliver nor close, to test a misbehaving driver.
	WaitNeverReturns bool `json:"wait_never_returns"`
}

// ExecCommand is what ExecTask does for a mock task: wait RunFor, then
// return StdoutString and ExitCode (and ExitErrMsg as ExitResult.Err).
type ExecCommand struct {
	RunFor       Duration `json:"run_for"`
	ExitCode     int      `json:"exit_code"`
	ExitErrMsg   string   `json:"exit_err_msg"`
	StdoutString string   `json:"stdout_string"`
}

// Duration is a time.Duration that decodes from a Go duration string
// ("10s") or a number of nanoseconds.
type Duration time.Duration

// UnmarshalJSON decodes "10s", "" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s == "" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("invalid duration %s: want a string like \"10s\" or nanoseconds", b)
	}
	*d = Duration(n)
	return nil
}

// MarshalJSON encodes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// untilStoppedRunFor is the run_for UntilStopped gives: longer than any
// test runs.
const untilStoppedRunFor = "24h"

// UntilStopped returns a copy of a mock task's config block with run_for
// set to a day when it sets none: a task that runs until it is stopped,
// for tests whose tasks must keep running (without run_for a mock task
// exits at once, as Nomad's does).
func UntilStopped(config map[string]any) map[string]any {
	out := make(map[string]any, len(config)+1)
	for k, v := range config {
		out[k] = v
	}
	if _, ok := out["run_for"]; !ok {
		out["run_for"] = untilStoppedRunFor
	}
	return out
}
