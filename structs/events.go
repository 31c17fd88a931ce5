package structs

import (
	"fmt"
	"strconv"
	"time"
)

// Task event types. The strings are part of the wire format and are what
// `drover alloc status` shows.
const (
	TaskReceived          = "Received"
	TaskSetup             = "Task Setup"
	TaskSetupFailure      = "Setup Failure"
	TaskStarted           = "Started"
	TaskKilling           = "Killing"
	TaskTerminated        = "Terminated"
	TaskKilled            = "Killed"
	TaskRestarting        = "Restarting"
	TaskNotRestarting     = "Not Restarting"
	TaskDriverFailure     = "Driver Failure"
	TaskDriverMessage     = "Driver"
	TaskLeaderDead        = "Leader Task Dead"
	TaskSiblingFailed     = "Sibling Task Failed"
	TaskMainDead          = "Main Tasks Dead"
	TaskSignaling         = "Signaling"
	TaskRestartSignal     = "Restart Signaled"
	TaskHookFailed        = "Task hook failed"
	TaskPluginUnhealthy   = "Plugin became unhealthy"
	TaskPluginHealthy     = "Plugin became healthy"
	TaskClientReconnected = "Reconnected"
	// TaskDownloadingArtifacts and TaskArtifactDownloadFailed are the
	// artifact hook's, as Nomad's.
	TaskDownloadingArtifacts   = "Downloading Artifacts"
	TaskArtifactDownloadFailed = "Failed Artifact Download"
	// TaskTemplate is the template hook's: what a template waits for
	// ("Missing: nomadVar ..."), a re-render's action, a render failure.
	TaskTemplate = "Template"
)

// TaskEvent is one step in a task's life. Time is Unix nanoseconds.
// DisplayMessage is the human summary; the other fields carry the details
// that Nomad's API clients read.
type TaskEvent struct {
	Type           string
	Time           int64
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
	StartDelay       int64 // nanoseconds
	FailedSibling    string
	TaskSignalReason string
	TaskSignal       string
	GenericSource    string
	OOMKilled        bool `json:",omitempty"`
	// DownloadError is why an artifact could not be fetched.
	DownloadError string `json:",omitempty"`
}

// NewTaskEvent returns an event of the given type stamped with the current time.
func NewTaskEvent(typ string) *TaskEvent {
	return &TaskEvent{Type: typ, Time: time.Now().UnixNano()}
}

// SetMessage sets the free-form message.
func (e *TaskEvent) SetMessage(msg string) *TaskEvent { e.Message = msg; return e }

// SetDisplayMessage overrides the computed display message.
func (e *TaskEvent) SetDisplayMessage(msg string) *TaskEvent { e.DisplayMessage = msg; return e }

// SetFailsTask marks the event as failing the task.
func (e *TaskEvent) SetFailsTask() *TaskEvent { e.FailsTask = true; return e }

// SetExitCode records an exit code.
func (e *TaskEvent) SetExitCode(c int) *TaskEvent { e.ExitCode = c; return e }

// SetSignal records a terminating signal number.
func (e *TaskEvent) SetSignal(s int) *TaskEvent { e.Signal = s; return e }

// SetOOMKilled records that the task was killed for exceeding its memory.
func (e *TaskEvent) SetOOMKilled(oom bool) *TaskEvent { e.OOMKilled = oom; return e }

// SetKillTimeout records the wait before a force kill and the signal sent.
func (e *TaskEvent) SetKillTimeout(d time.Duration, signal string) *TaskEvent {
	e.KillTimeout = d
	e.TaskSignal = signal
	return e
}

// SetKillError records why a kill failed.
func (e *TaskEvent) SetKillError(err error) *TaskEvent {
	if err != nil {
		e.KillError = err.Error()
	}
	return e
}

// SetKillReason records why the task is being killed.
func (e *TaskEvent) SetKillReason(r string) *TaskEvent { e.KillReason = r; return e }

// SetRestartReason records why the task restarts or does not.
func (e *TaskEvent) SetRestartReason(r string) *TaskEvent { e.RestartReason = r; return e }

// SetRestartDelay records the delay before the restart.
func (e *TaskEvent) SetRestartDelay(d time.Duration) *TaskEvent { e.StartDelay = int64(d); return e }

// SetDriverError records a driver failure.
func (e *TaskEvent) SetDriverError(err error) *TaskEvent {
	if err != nil {
		e.DriverError = err.Error()
	}
	return e
}

// SetSetupError records a failure while setting the task up.
func (e *TaskEvent) SetSetupError(err error) *TaskEvent {
	if err != nil {
		e.SetupError = err.Error()
	}
	return e
}

// SetDownloadError records why an artifact could not be fetched.
func (e *TaskEvent) SetDownloadError(err error) *TaskEvent {
	if err != nil {
		e.DownloadError = err.Error()
	}
	return e
}

// SetFailedSibling records which sibling task failed.
func (e *TaskEvent) SetFailedSibling(name string) *TaskEvent { e.FailedSibling = name; return e }

// SetTaskSignal records a signal sent on an operator's request.
func (e *TaskEvent) SetTaskSignal(sig string) *TaskEvent { e.TaskSignal = sig; return e }

// SetTaskSignalReason records why a signal was sent.
func (e *TaskEvent) SetTaskSignalReason(r string) *TaskEvent { e.TaskSignalReason = r; return e }

// SetDriverMessage records a message from the driver.
func (e *TaskEvent) SetDriverMessage(m string) *TaskEvent { e.DriverMessage = m; return e }

// PopulateDisplayMessage fills DisplayMessage (unless already set) and
// Details from the typed fields. Call it once, when the event is recorded.
func (e *TaskEvent) PopulateDisplayMessage() *TaskEvent {
	if e.Details == nil {
		e.Details = e.details()
	}
	if e.DisplayMessage != "" {
		return e
	}
	var msg string
	switch e.Type {
	case TaskReceived:
		msg = "Task received by client"
	case TaskSetup:
		msg = e.Message
	case TaskSetupFailure:
		msg = withDefault(e.SetupError, e.Message)
	case TaskStarted:
		msg = "Task started by client"
	case TaskKilling:
		sig := e.TaskSignal
		if sig == "" {
			sig = "interrupt"
		}
		if e.KillReason != "" {
			msg = fmt.Sprintf("%s: sent %s, waiting %s before force killing", e.KillReason, signalWord(sig), e.KillTimeout)
		} else {
			msg = fmt.Sprintf("Sent %s. Waiting %s before force killing", signalWord(sig), e.KillTimeout)
		}
	case TaskTerminated:
		msg = fmt.Sprintf("Exit Code: %d", e.ExitCode)
		if e.Signal != 0 {
			msg += fmt.Sprintf(", Signal: %d", e.Signal)
		}
		if e.OOMKilled {
			msg += ", OOM Killed"
		}
		if e.Message != "" {
			msg += ", Exit Message: " + strconv.Quote(e.Message)
		}
	case TaskKilled:
		if e.KillError != "" {
			msg = "Task killed with error: " + e.KillError
		} else {
			msg = "Task successfully killed"
		}
	case TaskRestarting:
		in := fmt.Sprintf("Task restarting in %s", time.Duration(e.StartDelay))
		if e.RestartReason != "" {
			msg = e.RestartReason + " - " + in
		} else {
			msg = in
		}
	case TaskNotRestarting:
		msg = withDefault(e.RestartReason, "Task will not restart")
	case TaskDriverFailure:
		msg = withDefault(e.DriverError, "Driver failed")
	case TaskDriverMessage:
		msg = e.DriverMessage
	case TaskLeaderDead:
		msg = "Leader task in group is dead"
	case TaskSiblingFailed:
		msg = withDefault(fmt.Sprintf("Task's sibling %q failed", e.FailedSibling), "A sibling task failed")
	case TaskMainDead:
		msg = "Main tasks in the group died"
	case TaskSignaling:
		msg = fmt.Sprintf("Task being sent signal %s", e.TaskSignal)
		if e.TaskSignalReason != "" {
			msg += ": " + e.TaskSignalReason
		}
	case TaskRestartSignal:
		msg = withDefault(e.RestartReason, "Task restart requested")
	case TaskDownloadingArtifacts:
		msg = "Client is downloading artifacts"
	case TaskArtifactDownloadFailed:
		msg = "Failed to download artifacts: " + e.DownloadError
	default:
		msg = e.Message
	}
	e.DisplayMessage = msg
	return e
}

func (e *TaskEvent) details() map[string]string {
	d := map[string]string{}
	put := func(k, v string) {
		if v != "" {
			d[k] = v
		}
	}
	if e.FailsTask {
		d["fails_task"] = "true"
	}
	put("restart_reason", e.RestartReason)
	put("setup_error", e.SetupError)
	put("driver_error", e.DriverError)
	put("driver_message", e.DriverMessage)
	put("download_error", e.DownloadError)
	if e.Type == TaskTerminated {
		d["exit_code"] = strconv.Itoa(e.ExitCode)
		d["signal"] = strconv.Itoa(e.Signal)
		if e.OOMKilled {
			d["oom_killed"] = "true"
		}
	}
	if e.KillTimeout != 0 {
		d["kill_timeout"] = e.KillTimeout.String()
	}
	put("kill_error", e.KillError)
	put("kill_reason", e.KillReason)
	if e.StartDelay != 0 {
		d["start_delay"] = strconv.FormatInt(e.StartDelay, 10)
	}
	put("failed_sibling", e.FailedSibling)
	put("task_signal", e.TaskSignal)
	put("task_signal_reason", e.TaskSignalReason)
	if len(d) == 0 {
		return nil
	}
	return d
}

func withDefault(v, def string) string {
	if v == "" || v == `Task's sibling "" failed` {
		return def
	}
	return v
}

// signalWord names common signals as people say them ("interrupt" for SIGINT).
func signalWord(sig string) string {
	switch sig {
	case "SIGINT", "interrupt":
		return "interrupt"
	case "SIGTERM":
		return "terminate"
	case "SIGKILL":
		return "kill"
	}
	return sig
}
