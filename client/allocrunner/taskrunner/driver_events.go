package taskrunner

import (
	"fmt"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// DriverEvents is where a TaskRunner registers for the task events its
// driver reports of its own (an image being pulled); the client's driver
// manager implements it.
type DriverEvents interface {
	RegisterEventHandler(driver, taskID string, h func(*drivers.TaskEvent))
	DeregisterEventHandler(driver, taskID string)
}

// watchDriverEvents records the driver's events about the task with ID
// taskID (a started or recovered invocation) as Driver events.
func (tr *TaskRunner) watchDriverEvents(taskID string) {
	if tr.driverEvents == nil {
		return
	}
	tr.driverEvents.RegisterEventHandler(tr.driverName, taskID, tr.recordDriverEvent)
}

// unwatchDriverEvents stops recording the events of the invocation.
func (tr *TaskRunner) unwatchDriverEvents(taskID string) {
	if tr.driverEvents == nil || taskID == "" {
		return
	}
	tr.driverEvents.DeregisterEventHandler(tr.driverName, taskID)
}

// recordDriverEvent records one driver task event.
func (tr *TaskRunner) recordDriverEvent(ev *drivers.TaskEvent) {
	msg := ev.Message
	if ev.Err != nil {
		msg = fmt.Sprintf("%s: %v", msg, ev.Err)
	}
	te := structs.NewTaskEvent(structs.TaskDriverMessage).SetDriverMessage(msg)
	if !ev.Timestamp.IsZero() {
		te.Time = ev.Timestamp.UnixNano()
	}
	tr.EmitEvent(te)
}
