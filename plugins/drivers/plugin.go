package drivers

import (
	"context"
	"errors"
	"time"

	"github.com/drover-io/drover/plugins/base"
)

// APIVersion is the version of the driver plugin API this SDK speaks; a
// driver plugin lists it in base.PluginInfo.PluginAPIVersions.
const APIVersion = "1"

// ErrPluginUnavailable is wrapped by errors from a driver that runs as a
// separate process which has exited or cannot be reached. The task may well
// still run: the caller should re-attach once the plugin is back rather than
// fail the task.
var ErrPluginUnavailable = errors.New("driver plugin unavailable")

// Plugin is a driver plugin as the agent manages it: a DriverPlugin that
// also describes and configures itself.
type Plugin interface {
	base.BasePlugin
	DriverPlugin
}

// EventsPlugin is implemented by drivers that report task events of their
// own (an image being pulled, a container OOM-killed) for the client to
// record on the task. It is optional: a driver without it has none.
type EventsPlugin interface {
	// TaskEvents streams the driver's task events until ctx is done.
	TaskEvents(ctx context.Context) (<-chan *TaskEvent, error)
}

// TaskEvent is an event a driver reports about one of its tasks.
type TaskEvent struct {
	TaskID      string
	AllocID     string
	TaskName    string
	Timestamp   time.Time
	Message     string
	Annotations map[string]string
	// Err is set when the event reports a failure.
	Err error
}
