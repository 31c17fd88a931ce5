package client

import (
	"context"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/structs"
)

// allocRunner returns the runner of an allocation, or a NotFound error.
func (c *Client) allocRunner(allocID string) (*allocrunner.AllocRunner, error) {
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	ar, ok := c.allocs[allocID]
	if !ok {
		return nil, structs.NotFound("allocation", allocID)
	}
	return ar, nil
}

// AllocState returns the runtime state of an allocation running on this
// node; the error is KindNotFound for an unknown allocation.
func (c *Client) AllocState(allocID string) (*allocrunner.State, error) {
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return nil, err
	}
	return ar.AllocState(), nil
}

// AllocDir returns the directory of an allocation running on this node.
// It is KindNotFound for an unknown allocation and for one whose directory
// was garbage collected.
func (c *Client) AllocDir(allocID string) (string, error) {
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return "", err
	}
	if ar.IsDestroyed() {
		return "", structs.NewError(structs.KindNotFound,
			"allocation %s was garbage collected on this node: its files are gone", allocID)
	}
	return ar.AllocDir().AllocDir, nil
}

// AllocTimeline returns the node's part of an allocation's timeline, as
// this agent recorded it since it started (nil: nothing recorded).
func (c *Client) AllocTimeline(allocID string) []structs.TimelineEntry {
	return c.timeline.Entries(allocID)
}

// RestartAlloc restarts tasks of an allocation in place, outside their
// restart policy: task alone (a conflict when it is not running); with
// allTasks every task but the poststop ones, in lifecycle order, running
// again the lifecycle tasks that completed; with neither, the tasks
// running now. task and allTasks together are invalid.
func (c *Client) RestartAlloc(ctx context.Context, allocID, task string, allTasks bool) error {
	if allTasks && task != "" {
		return structs.Invalid("restart: name a task or restart all tasks, not both")
	}
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return err
	}
	switch {
	case allTasks:
		return ar.RestartAllTasks(ctx, structs.NewTaskEvent(structs.TaskRestartSignal).
			SetRestartReason(allocrunner.ReasonAllTasksRestart))
	case task == "":
		return ar.RestartAll(ctx, structs.NewTaskEvent(structs.TaskRestartSignal).
			SetRestartReason(taskrunner.ReasonUserRestart))
	default:
		return ar.RestartTask(ctx, task, structs.NewTaskEvent(structs.TaskRestartSignal).
			SetRestartReason(taskrunner.ReasonUserRestart))
	}
}

// SignalAlloc sends a signal to one task of an allocation, or to all its
// running tasks when task is empty.
func (c *Client) SignalAlloc(ctx context.Context, allocID, task, signal string) error {
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return err
	}
	return ar.SignalTask(ctx, task, signal)
}
