package mock

import "github.com/drover-io/drover/plugins/base"

// TaskConfigSchema describes a task's config block (TaskConfig), for the
// check of jobs when they are submitted. Durations are Go duration
// strings ("10s") there; the driver also takes nanoseconds.
func TaskConfigSchema() *base.Schema {
	return &base.Schema{Fields: []*base.Field{
		{Name: "run_for", Type: base.TypeDuration, Description: "how long the task runs; unset: it exits at once"},
		{Name: "exit_code", Type: base.TypeInt, Description: "its exit code when run_for elapses"},
		{Name: "exit_signal", Type: base.TypeInt, Description: "its exit signal when run_for elapses"},
		{Name: "exit_err_msg", Type: base.TypeString, Description: "the exit's error when run_for elapses"},
		{Name: "start_error", Type: base.TypeString, Description: "StartTask fails with it"},
		{Name: "start_error_recoverable", Type: base.TypeBool, Description: "start_error is recoverable"},
		{Name: "start_block_for", Type: base.TypeDuration, Description: "StartTask blocks this long"},
		{Name: "kill_after", Type: base.TypeDuration, Description: "the task exits this long after StopTask's signal"},
		{Name: "signal_error", Type: base.TypeString, Description: "SignalTask fails with it"},
		{Name: "stdout_string", Type: base.TypeString, Description: "written to the task's stdout at start"},
		{Name: "stdout_repeat", Type: base.TypeInt, Description: "extra writes of stdout_string"},
		{Name: "stdout_repeat_duration", Type: base.TypeDuration, Description: "the time between them"},
		{Name: "exec_command", Type: base.TypeBlock, Description: "what alloc exec does", Block: &base.Schema{Fields: []*base.Field{
			{Name: "run_for", Type: base.TypeDuration},
			{Name: "exit_code", Type: base.TypeInt},
			{Name: "exit_err_msg", Type: base.TypeString},
			{Name: "stdout_string", Type: base.TypeString},
		}}},
		{Name: "wait_never_returns", Type: base.TypeBool, Description: "WaitTask never reports an exit (drover's own, to test a driver that misbehaves)"},
	}}
}
