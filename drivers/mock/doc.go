// Package mock is a task driver that runs no process: each task is a
// goroutine that behaves as its config block says (run for a while, exit
// with a code, fail to start, ignore a stop signal for a while, write to
// stdout, ...). It makes every TaskRunner and AllocRunner sequence testable
// without real processes.
//
// Where it sits in the data flow: the client's driver manager offers it as
// "mock_driver" next to the real drivers; a TaskRunner calls it through
// drivers.DriverPlugin exactly as it calls raw_exec.
//
// Config fields (the task's config block, decoded from TaskConfig.RawConfig;
// durations are strings like "10s" or numbers of nanoseconds):
//
//	run_for                  how long the task runs before exiting; unset or 0 exits at once
//	                         (after writing stdout_string), as Nomad's mock driver does
//	exit_code, exit_signal   the ExitResult when run_for elapses
//	exit_err_msg             ExitResult.Err when run_for elapses
//	start_error              StartTask fails with this message
//	start_error_recoverable  the start error is a drivers.RecoverableError marked recoverable
//	start_block_for          StartTask blocks this long (or until its ctx is done)
//	kill_after               after StopTask's signal the task exits only after this long
//	signal_error             SignalTask fails with this message
//	stdout_string            written to TaskConfig.StdoutPath when the task starts
//	stdout_repeat            write stdout_string this many more times ...
//	stdout_repeat_duration   ... this far apart
//	exec_command             {run_for, exit_code, exit_err_msg, stdout_string}: what ExecTask does;
//	                         ExecTaskStreaming writes stdout_string, echoes stdin to
//	                         stdout until it ends (reporting the terminal's initial
//	                         and later sizes as "size HxW" lines) and exits with
//	                         exit_code
//	wait_never_returns       drover extension: WaitTask's channel never receives a
//	                         result nor closes, to test a misbehaving driver
//
// A stopped task reports what a killed process would: Signal is the stop
// signal's number and ExitCode 128+Signal; when StopTask's timeout passes
// before kill_after, the task is killed with SIGKILL (Signal 9, ExitCode 137).
//
// Tasks live in the Driver's memory only: RecoverTask succeeds for a task
// this Driver still holds and fails with drivers.ErrTaskNotFound otherwise.
package mock
