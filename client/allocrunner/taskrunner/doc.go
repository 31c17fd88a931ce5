// Package taskrunner runs one task of an allocation: it owns the task's
// TaskState, runs the task hooks (task directory, environment, devices, log
// paths), starts the task through its driver, persists the driver's handle,
// waits for the task to exit and applies the restart policy.
//
// Where it sits in the data flow: the AllocRunner creates one TaskRunner per
// task and calls Run in a goroutine; each state change (an event, a new
// state) is persisted to the StateDB and reported to the AllocRunner through
// the StateUpdater callback, from where it flows to the servers. The driver
// is the client's driver manager proxy (client/drivermanager), which
// survives plugin restarts; while an invocation runs, the TaskRunner
// registers with the manager (DriverEvents) to record the driver's own task
// events.
//
// Prestart hooks may save state of their own (PrestartResponse.State) and
// report their work Done; both are persisted in the task's LocalState
// (HookState) next to the driver handle. A hook is given what it saved as
// PrestartRequest.PreviousState on its next run, and a Done hook is not
// run again, in this agent or in a restarted one. The device hook saves
// the reservations it got, so a task started again (after a restart or an
// agent restart) re-uses them instead of reserving its devices again; the
// task directory hook is Done once the directory is built.
//
// The template hook (template_hook.go, with client/template) is the one
// hook that outlives its prestart: it renders the task's templates before
// the start and keeps watching what they read while the run lasts,
// restarting, signalling or running a script in the task when a re-render
// changes a file; Run stops it when it returns, and a run that re-attaches
// after an agent restart resumes it.
//
// Every start is written ahead: the invocation's config is persisted as
// the task's start intent (state.LocalState.StartIntent, synced) before
// the driver's StartTask is called, and replaced by the handle once it
// returns; without the intent on disk nothing is started.
//
// After an agent restart, Restore loads the persisted state and Run
// re-attaches to the task through its driver: by its handle, or, when the
// agent died during a start, by its start intent (a handle holding only
// the config), which the driver uses to find the task instead of the
// runner starting a second one; a driver that answers ErrTaskNotFound
// guarantees no task was or will be started for it, and the task is then
// started (once). Re-attaching runs under the shutdown context, not the
// kill context: a kill requested meanwhile (the servers stopped the alloc
// while the agent was down) stops the re-attached task through its
// driver. A task that cannot be re-attached (its shim died while the agent
// was down, say) ended without the agent seeing its exit: it is recorded
// (a Driver message saying why, Terminated) and handled by its restart
// policy like any failed exit; if it was to be killed, Killed is recorded,
// with a kill error unless the driver said the task is gone. A shutdown
// while re-attaching keeps the handle (or intent) for the next agent.
//
// Kill is a desired state: Kill marks the task to be killed and the run
// loop converges to it from wherever it is (pending, in its hooks, running,
// waiting to restart). Shutdown stops the run loop and leaves the task
// running for a later agent to recover. Restart stops the running task and
// starts it again outside the restart policy; RestartHeld stops it and
// waits for the caller's release; Rearm gives a runner whose run ended a
// new run (new kill context and WaitCh), for a completed task to run
// again. Drivers are never trusted: every
// wait on a driver also selects on a context.
package taskrunner
