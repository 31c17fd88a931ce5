package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// errFakeShimDied stands for shim.ErrShimDied in these tests.
var errFakeShimDied = errors.New("shim exited without recording the task's exit")

// failingRecover is the mock driver whose RecoverTask fails with err; when
// block is set it first waits for its context to end.
type failingRecover struct {
	*mock.Driver
	err   error
	block bool
}

func (d *failingRecover) RecoverTask(ctx context.Context, _ *drivers.TaskHandle) error {
	if d.block {
		<-ctx.Done()
		return fmt.Errorf("recover task: %w", ctx.Err())
	}
	return d.err
}

// restoredRunning persists the state of a task that was running when the
// agent went down: a Started event and a driver handle.
func restoredRunning(t *testing.T, db *state.MemDB, alloc *structs.Allocation) *state.LocalState {
	t.Helper()
	ts := structs.NewTaskState()
	ts.State = structs.TaskStateRunning
	ts.StartedAt = time.Now()
	for _, typ := range []string{structs.TaskReceived, structs.TaskSetup, structs.TaskStarted} {
		ts.Events = append(ts.Events, structs.NewTaskEvent(typ).PopulateDisplayMessage())
	}
	ls := &state.LocalState{InvocationID: "old", TaskHandle: &drivers.TaskHandle{
		Config: &drivers.TaskConfig{ID: alloc.ID + "/web/old", AllocID: alloc.ID, Name: "web"},
		State:  drivers.TaskStateRunning,
	}}
	if err := db.PutTaskState(alloc.ID, "web", ts); err != nil {
		t.Fatal(err)
	}
	if err := db.PutTaskRunnerLocalState(alloc.ID, "web", ls); err != nil {
		t.Fatal(err)
	}
	return ls
}

// TestTaskRunnerFailedReattachIsAbnormalExit: a task whose re-attach fails
// after an agent restart (its shim died, say) ended abnormally while the
// agent was down: it is reported (Driver message, Terminated) and then
// handled by its restart policy like any failed exit.
func TestTaskRunnerFailedReattachIsAbnormalExit(t *testing.T) {
	recoverErr := fmt.Errorf("recover task %q: %w: %w", "web", drivers.ErrTaskNotFound, errFakeShimDied)
	tests := []struct {
		name     string
		jobType  string
		policy   *structs.RestartPolicy
		want     []string // events after the restored ones
		state    string
		failed   bool
		restarts uint64
		check    func(t *testing.T, st *structs.TaskState)
	}{
		{
			name: "attempts left restarts", jobType: structs.JobTypeService,
			policy: &structs.RestartPolicy{Attempts: 2, Interval: time.Hour, Delay: 5 * time.Millisecond, Mode: structs.RestartPolicyModeFail},
			want:   []string{"Driver", "Terminated", "Restarting", "Task Setup", "Started"},
			state:  structs.TaskStateRunning, restarts: 1,
			check: func(t *testing.T, st *structs.TaskState) {
				e := findEvent(st, "Restarting")
				if e.StartDelay != int64(5*time.Millisecond) || e.RestartReason != ReasonWithinPolicy {
					t.Errorf("Restarting = %+v", e)
				}
			},
		},
		{
			name: "batch attempts left restarts", jobType: structs.JobTypeBatch,
			policy: &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: time.Millisecond, Mode: structs.RestartPolicyModeFail},
			want:   []string{"Driver", "Terminated", "Restarting", "Task Setup", "Started"},
			state:  structs.TaskStateRunning, restarts: 1,
		},
		{
			name: "attempts 0 mode fail fails the task", jobType: structs.JobTypeService,
			policy: &structs.RestartPolicy{Attempts: 0, Interval: time.Hour, Delay: time.Millisecond, Mode: structs.RestartPolicyModeFail},
			want:   []string{"Driver", "Terminated", "Not Restarting"},
			state:  structs.TaskStateDead, failed: true,
			check: func(t *testing.T, st *structs.TaskState) {
				if e := findEvent(st, "Not Restarting"); e.RestartReason != ReasonNoRestarts || !e.FailsTask {
					t.Errorf("Not Restarting = %+v", e)
				}
			},
		},
		{
			name: "attempts 0 mode delay waits out the interval", jobType: structs.JobTypeService,
			policy: &structs.RestartPolicy{Attempts: 0, Interval: 20 * time.Millisecond, Delay: time.Millisecond, Mode: structs.RestartPolicyModeDelay},
			want:   []string{"Driver", "Terminated", "Restarting", "Task Setup", "Started"},
			state:  structs.TaskStateRunning, restarts: 1,
			check: func(t *testing.T, st *structs.TaskState) {
				e := findEvent(st, "Restarting")
				if !strings.Contains(e.RestartReason, `mode is "delay"`) || e.StartDelay != int64(20*time.Millisecond) {
					t.Errorf("Restarting = %+v", e)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				driver := &failingRecover{Driver: mock.New(nil), err: recoverErr}
				defer driver.Shutdown()
				db := state.NewMemDB()
				alloc := testAlloc(tt.jobType, &structs.Task{Config: map[string]any{}, RestartPolicy: tt.policy})
				restoredRunning(t, db, alloc)
				h := newHarness(t, alloc, driver.Driver, db)
				h.tr.driver = driver
				if err := h.tr.Restore(); err != nil {
					t.Fatal(err)
				}
				go h.tr.Run()
				defer func() {
					if err := h.tr.Kill(context.Background(), nil); err != nil {
						t.Error(err)
					}
				}()
				waitState(t, h.tr, "the restart policy's outcome", func(st *structs.TaskState) bool {
					return st.State == tt.state && len(st.Events) >= 3+len(tt.want)
				})
				st := h.tr.TaskState()
				if got := eventTypes(st)[3:]; !slices.Equal(got, tt.want) {
					t.Errorf("events after restore = %q, want %q", got, tt.want)
				}
				if st.Failed != tt.failed || st.Restarts != tt.restarts {
					t.Errorf("failed = %v restarts = %d, want %v %d", st.Failed, st.Restarts, tt.failed, tt.restarts)
				}
				if e := findEvent(st, "Driver"); !strings.Contains(e.DisplayMessage, "Failed to re-attach to task") ||
					!strings.Contains(e.DisplayMessage, errFakeShimDied.Error()) {
					t.Errorf("Driver event = %q", e.DisplayMessage)
				}
				if e := findEvent(st, "Terminated"); e.ExitCode != -1 || !strings.Contains(e.DisplayMessage, "re-attach") {
					t.Errorf("Terminated = %q", e.DisplayMessage)
				}
				if tt.check != nil {
					tt.check(t, st)
				}
				ls, _, err := db.GetTaskRunnerState(alloc.ID, "web")
				if err != nil {
					t.Fatal(err)
				}
				if h := ls.TaskHandle; h != nil && h.Config.ID == alloc.ID+"/web/old" {
					t.Errorf("the lost task's handle is still persisted")
				}
			})
		})
	}
}

// TestTaskRunnerReattachShutdownKeepsHandle: a runner shut down while
// re-attaching leaves the handle and the state for the next agent.
func TestTaskRunnerReattachShutdownKeepsHandle(t *testing.T) {
	driver := &failingRecover{Driver: mock.New(nil), block: true}
	defer driver.Shutdown()
	db := state.NewMemDB()
	alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}})
	restoredRunning(t, db, alloc)
	h := newHarness(t, alloc, driver.Driver, db)
	h.tr.driver = driver
	if err := h.tr.Restore(); err != nil {
		t.Fatal(err)
	}
	go h.tr.Run()
	h.tr.Shutdown()
	ls, ts, err := db.GetTaskRunnerState(alloc.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	if ls.TaskHandle == nil || ls.TaskHandle.Config.ID != alloc.ID+"/web/old" {
		t.Errorf("handle = %+v, want the old one kept", ls.TaskHandle)
	}
	if got, want := eventTypes(ts), []string{"Received", "Task Setup", "Started"}; !slices.Equal(got, want) || ts.State != structs.TaskStateRunning {
		t.Errorf("state %q events %q, want running %q", ts.State, got, want)
	}
}
