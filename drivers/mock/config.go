package mock

import (
	"encoding/json"
	"fmt"
	"time"
)

// TaskConfig is the mock driver's config block.
type TaskConfig struct {
	RunFor               Duration     `json:"run_for"`
	ExitCode             int          `json:"exit_code"`
	ExitSignal           int          `json:"exit_signal"`
	ExitErrMsg           string       `json:"exit_err_msg"`
	StartErr             string       `json:"start_error"`
	StartErrRecoverable  bool         `json:"start_error_recoverable"`
	StartBlockFor        Duration     `json:"start_block_for"`
	KillAfter            Duration     `json:"kill_after"`
	SignalErr            string       `json:"signal_error"`
	StdoutString         string       `json:"stdout_string"`
	StdoutRepeat         int          `json:"stdout_repeat"`
	StdoutRepeatDuration Duration     `json:"stdout_repeat_duration"`
	ExecCommand          *ExecCommand `json:"exec_command"`
	WaitNeverReturns     bool         `json:"wait_never_returns"`
}

// ExecCommand is what ExecTask does for a mock task.
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
