package taskrunner

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// recordingHook records the PreviousState of each of its runs and returns
// a fixed response State and Done.
type recordingHook struct {
	name  string
	state map[string]string
	done  bool

	mu   sync.Mutex // guards prev
	prev []map[string]string
}

func (h *recordingHook) Name() string { return h.name }

func (h *recordingHook) Prestart(_ context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	h.mu.Lock()
	h.prev = append(h.prev, req.PreviousState)
	h.mu.Unlock()
	resp.State, resp.Done = h.state, h.done
	return nil
}

func (h *recordingHook) runs() []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]string(nil), h.prev...)
}

// TestRestoredTaskRunnerGivesHooksTheirState: a restored runner skips the
// hooks that were Done and gives the others the state they saved; the
// state a hook returns is persisted with the local state.
func TestRestoredTaskRunnerGivesHooksTheirState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := state.NewMemDB()
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}})
		saved := &state.LocalState{HookState: map[string]*state.HookState{
			"keeper":   {Data: map[string]string{"k": "v"}},
			"finished": {Done: true, Data: map[string]string{"x": "y"}},
			"task_dir": {Done: true},
		}}
		if err := db.PutTaskRunnerLocalState(alloc.ID, "web", saved); err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, alloc, nil, db)
		keeper := &recordingHook{name: "keeper", state: map[string]string{"k": "v2"}}
		finished := &recordingHook{name: "finished"}
		fresh := &recordingHook{name: "fresh"}
		h.tr.prestartHooks = append(h.tr.prestartHooks, keeper, finished, fresh)
		if err := h.tr.Restore(); err != nil {
			t.Fatal(err)
		}
		go h.tr.Run()
		defer func() {
			if err := h.tr.Kill(context.Background(), nil); err != nil {
				t.Error(err)
			}
		}()
		settle(t, "the task to run", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })

		if got := keeper.runs(); len(got) != 1 || !maps.Equal(got[0], map[string]string{"k": "v"}) {
			t.Errorf("keeper's PreviousState = %v, want [map[k:v]]", got)
		}
		if got := finished.runs(); len(got) != 0 {
			t.Errorf("a hook restored as Done ran %d times", len(got))
		}
		if got := fresh.runs(); len(got) != 1 || got[0] != nil {
			t.Errorf("fresh hook's PreviousState = %v, want one nil", got)
		}
		if e := findEvent(h.tr.TaskState(), structs.TaskSetup); e != nil {
			t.Errorf("task_dir restored as Done ran again: %+v", e)
		}
		ls, _, err := db.GetTaskRunnerState(alloc.ID, "web")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]*state.HookState{
			"keeper":   {Data: map[string]string{"k": "v2"}},
			"finished": {Done: true, Data: map[string]string{"x": "y"}},
			"task_dir": {Done: true},
		}
		if !reflect.DeepEqual(ls.HookState, want) {
			t.Errorf("persisted hook states = %+v, want %+v", ls.HookState, want)
		}
		if ls.TaskHandle == nil || ls.InvocationID == "" {
			t.Errorf("the new handle was not persisted next to the hook states: %+v", ls)
		}
	})
}

// TestTaskRunnerPersistsHookStateAcrossHandleChanges: starting the task
// and clearing its handle keep the hooks' states.
func TestTaskRunnerPersistsHookStateAcrossHandleChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := state.NewMemDB()
		alloc := testAlloc(structs.JobTypeBatch, &structs.Task{Config: map[string]any{"run_for": "1ms"}})
		h := newHarness(t, alloc, nil, db)
		h.tr.prestartHooks = append(h.tr.prestartHooks, &recordingHook{name: "rec", state: map[string]string{}})
		go h.tr.Run()
		waitClosed(t, "the task to finish", h.tr.WaitCh())
		ls, ts, err := db.GetTaskRunnerState(alloc.ID, "web")
		if err != nil {
			t.Fatal(err)
		}
		if ts.State != structs.TaskStateDead || ls.TaskHandle != nil {
			t.Fatalf("state %q handle %+v, want dead without handle", ts.State, ls.TaskHandle)
		}
		want := map[string]*state.HookState{"rec": {Data: map[string]string{}}, "task_dir": {Done: true}}
		if !reflect.DeepEqual(ls.HookState, want) {
			t.Errorf("hook states = %+v, want %+v", ls.HookState, want)
		}
	})
}

// configRecorder records the TaskConfigs it is asked to start.
type configRecorder struct {
	*failingRecover
	mu   sync.Mutex // guards cfgs
	cfgs []*drivers.TaskConfig
}

func (d *configRecorder) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	d.mu.Lock()
	d.cfgs = append(d.cfgs, cfg)
	d.mu.Unlock()
	return d.failingRecover.StartTask(ctx, cfg)
}

func (d *configRecorder) started() []*drivers.TaskConfig {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*drivers.TaskConfig(nil), d.cfgs...)
}

// setDeviceReserver replaces the runner's device hook's reserver.
func setDeviceReserver(t *testing.T, tr *TaskRunner, r DeviceReserver) {
	t.Helper()
	for _, h := range tr.prestartHooks {
		if d, ok := h.(*deviceHook); ok {
			d.reserver = r
			return
		}
	}
	t.Fatal("no device hook")
}

// TestDeviceHookDoesNotReserveAgainAfterRestore: the reservation made
// before an agent restart is re-used when the restored task starts again
// (here: it could not be re-attached and its restart policy restarts it).
func TestDeviceHookDoesNotReserveAgainAfterRestore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gpu := &structs.AllocatedDeviceResource{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{"fake-1"}}
		policy := &structs.RestartPolicy{Attempts: 2, Interval: 3600e9, Delay: 1e6, Mode: structs.RestartPolicyModeFail}
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}, RestartPolicy: policy})
		alloc.AllocatedResources = &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{"web": {Devices: []*structs.AllocatedDeviceResource{gpu}}}}
		db := state.NewMemDB()

		// First agent: the task starts, reserving its device once.
		first := &fakeReserver{}
		h1 := newHarness(t, alloc, nil, db)
		setDeviceReserver(t, h1.tr, first)
		go h1.tr.Run()
		settle(t, "the task to run", func() bool { return h1.tr.TaskState().State == structs.TaskStateRunning })
		h1.tr.Shutdown()
		if n := first.callCount(); n != 1 {
			t.Fatalf("first agent reserved %d times, want 1", n)
		}

		// Second agent: re-attach fails, the task restarts with the saved
		// reservation.
		driver := &configRecorder{failingRecover: &failingRecover{Driver: mock.New(nil), err: errors.New("shim gone")}}
		defer driver.Shutdown()
		second := &fakeReserver{}
		h2 := newHarness(t, alloc, driver.Driver, db)
		h2.tr.driver = driver
		setDeviceReserver(t, h2.tr, second)
		if err := h2.tr.Restore(); err != nil {
			t.Fatal(err)
		}
		go h2.tr.Run()
		defer func() {
			if err := h2.tr.Kill(context.Background(), nil); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(policy.Delay) // the restart policy's delay
		settle(t, "the restarted task to run", func() bool {
			return h2.tr.TaskState().State == structs.TaskStateRunning && len(driver.started()) == 1
		})
		if n := second.callCount(); n != 0 {
			t.Errorf("restored runner reserved %d times, want 0", n)
		}
		cfg := driver.started()[0]
		if cfg.Env["FAKE_VISIBLE_DEVICES"] != "fake-1" {
			t.Errorf("env FAKE_VISIBLE_DEVICES = %q, want the saved reservation's", cfg.Env["FAKE_VISIBLE_DEVICES"])
		}
		if !reflect.DeepEqual(cfg.Mounts, []*drivers.MountConfig{{TaskPath: "/t", HostPath: "/h", Readonly: true}}) ||
			!reflect.DeepEqual(cfg.Devices, []*drivers.DeviceConfig{{TaskPath: "/dev/f", HostPath: "/dev/f0", Permissions: "rw"}}) {
			t.Errorf("mounts %+v devices %+v, want the saved reservation's", cfg.Mounts, cfg.Devices)
		}
	})
}

// TestDeviceHookSavedReservations: which saved state the hook re-uses.
func TestDeviceHookSavedReservations(t *testing.T) {
	gpu := &structs.AllocatedDeviceResource{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{"fake-1"}}
	other := &structs.AllocatedDeviceResource{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{"fake-2"}}
	task := &structs.Task{Name: "web"}
	saveFor := func(d *structs.AllocatedDeviceResource) map[string]string {
		var resp PrestartResponse
		if err := (&deviceHook{reserver: &fakeReserver{}}).Prestart(context.Background(),
			&PrestartRequest{Alloc: deviceAlloc(d), Task: task}, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.State == nil {
			t.Fatal("a first reservation saved no state")
		}
		return resp.State
	}
	tests := []struct {
		name      string
		prev      map[string]string
		wantCalls int
		wantSave  bool
	}{
		{"nothing saved", nil, 1, true},
		{"same devices", saveFor(gpu), 0, false},
		{"other instances", saveFor(other), 1, true},
		{"undecodable", map[string]string{deviceReservationsKey: "{"}, 1, true},
		{"other keys only", map[string]string{"x": "y"}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeReserver{}
			var resp PrestartResponse
			err := (&deviceHook{reserver: r}).Prestart(context.Background(),
				&PrestartRequest{Alloc: deviceAlloc(gpu), Task: task, PreviousState: tt.prev}, &resp)
			if err != nil {
				t.Fatal(err)
			}
			if r.callCount() != tt.wantCalls || (resp.State != nil) != tt.wantSave {
				t.Fatalf("calls %d saved %v, want %d %v", r.callCount(), resp.State != nil, tt.wantCalls, tt.wantSave)
			}
			if resp.Env["FAKE_VISIBLE_DEVICES"] != "fake-1" || len(resp.Mounts) != 1 || len(resp.Devices) != 1 {
				t.Fatalf("env %v mounts %v devices %v", resp.Env, resp.Mounts, resp.Devices)
			}
		})
	}
}
