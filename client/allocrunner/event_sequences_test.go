package allocrunner

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestAllocRunnerEventSequences runs whole allocations on the mock driver
// and checks the event sequence each task records, and the alloc's client
// status, for every path of the task lifecycle.
func TestAllocRunnerEventSequences(t *testing.T) {
	fail1 := &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 5 * time.Millisecond, Mode: structs.RestartPolicyModeFail}
	delay1 := &structs.RestartPolicy{Attempts: 1, Interval: 100 * time.Millisecond, Delay: 5 * time.Millisecond, Mode: structs.RestartPolicyModeDelay}
	longDelay := &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: time.Hour, Mode: structs.RestartPolicyModeFail}
	task := func(name string, config map[string]any, edit func(*structs.Task)) *structs.Task {
		tk := mockTask(name, config)
		if edit != nil {
			edit(tk)
		}
		return tk
	}
	policy := func(p *structs.RestartPolicy) func(*structs.Task) {
		return func(tk *structs.Task) { tk.RestartPolicy = p }
	}
	running := structs.TaskStateRunning
	started := []string{"Received", "Task Setup", "Started"}
	killedWhileRunning := slices.Concat(started, []string{"Killing", "Terminated", "Killed"})

	tests := []struct {
		name    string
		jobType string
		tasks   []*structs.Task
		// act, when set, runs once Run started: it waits for a condition
		// and acts (stop, signal).
		act    func(t *testing.T, h *harness)
		want   map[string][]string // exact event types per task
		status string
		check  func(t *testing.T, st *State)
	}{
		{
			name: "exit 0", jobType: structs.JobTypeBatch,
			tasks:  []*structs.Task{task("web", map[string]any{"run_for": "5ms"}, nil)},
			want:   map[string][]string{"web": slices.Concat(started, []string{"Terminated", "Not Restarting"})},
			status: structs.AllocClientStatusComplete,
			check: func(t *testing.T, st *State) {
				if st.TaskStates["web"].Failed || findEvent(st.TaskStates["web"], "Terminated").ExitCode != 0 {
					t.Errorf("web failed or nonzero exit: %+v", st.TaskStates["web"])
				}
			},
		},
		{
			name: "exit 1 with restarts, exhausted in mode fail", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{"run_for": "5ms", "exit_code": 1}, policy(fail1))},
			want: map[string][]string{"web": slices.Concat(started,
				[]string{"Terminated", "Restarting", "Started", "Terminated", "Not Restarting"})},
			status: structs.AllocClientStatusFailed,
			check: func(t *testing.T, st *State) {
				ws := st.TaskStates["web"]
				if e := findEvent(ws, "Restarting"); e.StartDelay != int64(5*time.Millisecond) || e.RestartReason != "Restart within policy" {
					t.Errorf("Restarting = %+v", e)
				}
				if e := findEvent(ws, "Not Restarting"); !e.FailsTask || !strings.Contains(e.RestartReason, `mode is "fail"`) {
					t.Errorf("Not Restarting = %+v", e)
				}
				if !ws.Failed || ws.Restarts != 1 || st.ClientDescription != DescFailed {
					t.Errorf("web = failed %v restarts %d; alloc %q", ws.Failed, ws.Restarts, st.ClientDescription)
				}
			},
		},
		{
			name: "restarts exhausted in mode delay: waits and restarts, never fails", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{"run_for": "1ms", "exit_code": 1}, policy(delay1))},
			act: func(t *testing.T, h *harness) {
				waitChange(t, h.ar, "a restart delayed by mode delay", func() bool {
					for _, e := range h.ar.AllocState().TaskStates["web"].Events {
						if e.Type == structs.TaskRestarting && strings.Contains(e.RestartReason, `mode is "delay"`) {
							return true
						}
					}
					return false
				})
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			status: structs.AllocClientStatusComplete,
			check: func(t *testing.T, st *State) {
				ws := st.TaskStates["web"]
				got := types(ws)
				if ws.Failed || got[len(got)-1] != "Killed" || slices.Contains(got, "Not Restarting") {
					t.Errorf("web failed=%v events %q", ws.Failed, got)
				}
				for _, e := range ws.Events {
					if e.Type == structs.TaskRestarting && strings.Contains(e.RestartReason, `mode is "delay"`) && e.StartDelay < int64(5*time.Millisecond) {
						t.Errorf("delayed restart waits %v, less than the policy delay", time.Duration(e.StartDelay))
					}
				}
			},
		},
		{
			name: "leader exit kills the others", jobType: structs.JobTypeBatch,
			tasks: []*structs.Task{
				task("leader", map[string]any{"run_for": "20ms"}, func(tk *structs.Task) { tk.Leader = true }),
				task("follower", map[string]any{}, nil),
			},
			act: func(t *testing.T, h *harness) { allRunning(t, h.ar, "follower") },
			want: map[string][]string{
				"leader":   slices.Concat(started, []string{"Terminated", "Not Restarting"}),
				"follower": slices.Concat(started, []string{"Leader Task Dead", "Killing", "Terminated", "Killed"}),
			},
			status: structs.AllocClientStatusComplete,
		},
		{
			name: "sibling failure kills the others and fails the alloc", jobType: structs.JobTypeService,
			tasks: []*structs.Task{
				task("bad", map[string]any{"run_for": "20ms", "exit_code": 1}, nil),
				task("good", map[string]any{}, nil),
			},
			act: func(t *testing.T, h *harness) { allRunning(t, h.ar, "good") },
			want: map[string][]string{
				"bad":  slices.Concat(started, []string{"Terminated", "Not Restarting"}),
				"good": slices.Concat(started, []string{"Sibling Task Failed", "Killing", "Terminated", "Killed"}),
			},
			status: structs.AllocClientStatusFailed,
			check: func(t *testing.T, st *State) {
				if e := findEvent(st.TaskStates["good"], "Sibling Task Failed"); e.FailedSibling != "bad" {
					t.Errorf("Sibling Task Failed = %+v", e)
				}
				if st.TaskStates["good"].Failed || !st.TaskStates["bad"].Failed {
					t.Errorf("good failed %v, bad failed %v", st.TaskStates["good"].Failed, st.TaskStates["bad"].Failed)
				}
			},
		},
		{
			name: "prestart task fails: main tasks never start, the alloc fails", jobType: structs.JobTypeService,
			tasks: []*structs.Task{
				task("init", map[string]any{"run_for": "5ms", "exit_code": 1}, func(tk *structs.Task) {
					tk.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
				}),
				task("web", map[string]any{}, nil),
				task("web2", map[string]any{}, nil),
			},
			want: map[string][]string{
				"init": slices.Concat(started, []string{"Terminated", "Not Restarting"}),
				"web":  {"Received", "Sibling Task Failed", "Killed"},
				"web2": {"Received", "Sibling Task Failed", "Killed"},
			},
			status: structs.AllocClientStatusFailed,
		},
		{
			name: "stop while running", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{}, nil)},
			act: func(t *testing.T, h *harness) {
				allRunning(t, h.ar, "web")
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			want:   map[string][]string{"web": killedWhileRunning},
			status: structs.AllocClientStatusComplete,
		},
		{
			name: "stop while pending: waiting to restart", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{"run_for": "1ms"}, policy(longDelay))},
			act: func(t *testing.T, h *harness) {
				waitChange(t, h.ar, "restarting", func() bool { return hasEvent(h.ar.AllocState().TaskStates["web"], "Restarting") })
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			want:   map[string][]string{"web": slices.Concat(started, []string{"Terminated", "Restarting", "Killed"})},
			status: structs.AllocClientStatusComplete,
		},
		{
			name: "stop while pending: starting", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{"start_block_for": "10s"}, nil)},
			act: func(t *testing.T, h *harness) {
				waitChange(t, h.ar, "task setup", func() bool { return hasEvent(h.ar.AllocState().TaskStates["web"], "Task Setup") })
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			want:   map[string][]string{"web": {"Received", "Task Setup", "Killed"}},
			status: structs.AllocClientStatusComplete,
		},
		{
			name: "stop during prestart: main tasks never start", jobType: structs.JobTypeService,
			tasks: []*structs.Task{
				task("init", map[string]any{}, func(tk *structs.Task) {
					tk.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
				}),
				task("web", map[string]any{}, nil),
			},
			act: func(t *testing.T, h *harness) {
				allRunning(t, h.ar, "init")
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			want: map[string][]string{
				"init": killedWhileRunning,
				"web":  {"Received", "Killed"},
			},
			status: structs.AllocClientStatusComplete,
		},
		{
			name: "kill timeout: a task that ignores SIGINT is killed with SIGKILL", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{"kill_after": "10s"}, func(tk *structs.Task) { tk.KillTimeout = 20 * time.Millisecond })},
			act: func(t *testing.T, h *harness) {
				allRunning(t, h.ar, "web")
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			want:   map[string][]string{"web": killedWhileRunning},
			status: structs.AllocClientStatusComplete,
			check: func(t *testing.T, st *State) {
				ws := st.TaskStates["web"]
				if e := findEvent(ws, "Killing"); e.DisplayMessage != "Sent interrupt. Waiting 20ms before force killing" || e.KillTimeout != 20*time.Millisecond {
					t.Errorf("Killing = %q", e.DisplayMessage)
				}
				if e := findEvent(ws, "Terminated"); e.ExitCode != 137 || e.Signal != 9 {
					t.Errorf("Terminated = %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "kill_signal and kill_timeout honoured", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{}, func(tk *structs.Task) {
				tk.KillSignal = "SIGTERM"
				tk.KillTimeout = 3 * time.Second
			})},
			act: func(t *testing.T, h *harness) {
				allRunning(t, h.ar, "web")
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			want:   map[string][]string{"web": killedWhileRunning},
			status: structs.AllocClientStatusComplete,
			check: func(t *testing.T, st *State) {
				ws := st.TaskStates["web"]
				if e := findEvent(ws, "Killing"); e.DisplayMessage != "Sent terminate. Waiting 3s before force killing" || e.TaskSignal != "SIGTERM" {
					t.Errorf("Killing = %q (signal %q)", e.DisplayMessage, e.TaskSignal)
				}
				if e := findEvent(ws, "Terminated"); e.Signal != 15 || e.ExitCode != 143 {
					t.Errorf("Terminated = %q", e.DisplayMessage)
				}
			},
		},
		{
			name: "signal error: recorded, returned, the task keeps running", jobType: structs.JobTypeService,
			tasks: []*structs.Task{task("web", map[string]any{"signal_error": "no such process"}, nil)},
			act: func(t *testing.T, h *harness) {
				allRunning(t, h.ar, "web")
				err := h.ar.SignalTask(context.Background(), "web", "SIGUSR1")
				if err == nil || !strings.Contains(err.Error(), "no such process") {
					t.Errorf("SignalTask = %v, want the driver's error", err)
				}
				if st := h.ar.AllocState(); st.TaskStates["web"].State != running || st.ClientStatus != structs.AllocClientStatusRunning {
					t.Errorf("after a failed signal: %s / %s", st.TaskStates["web"].State, st.ClientStatus)
				}
				if err := h.ar.SignalTask(context.Background(), "nope", "SIGUSR1"); structs.KindOf(err) != structs.KindNotFound {
					t.Errorf("SignalTask(unknown task) = %v", err)
				}
				h.ar.Update(stopUpdate(h.ar.Alloc()))
			},
			want:   map[string][]string{"web": slices.Concat(started, []string{"Signaling", "Killing", "Terminated", "Killed"})},
			status: structs.AllocClientStatusComplete,
			check: func(t *testing.T, st *State) {
				if e := findEvent(st.TaskStates["web"], "Signaling"); e.TaskSignal != "SIGUSR1" {
					t.Errorf("Signaling = %+v", e)
				}
				if st.TaskStates["web"].Failed {
					t.Errorf("a failed signal fails the task")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, testAlloc(tc.jobType, tc.tasks...))
				go h.ar.Run()
				if tc.act != nil {
					tc.act(t, h)
				}
				waitClosed(t, "run", h.ar.WaitCh())
				st := h.ar.AllocState()
				for name, want := range tc.want {
					if got := types(st.TaskStates[name]); !slices.Equal(got, want) {
						t.Errorf("%s events = %q\nwant %q", name, got, want)
					}
				}
				for name, ts := range st.TaskStates {
					if ts.State != structs.TaskStateDead {
						t.Errorf("%s state = %s after Run returned", name, ts.State)
					}
				}
				if st.ClientStatus != tc.status {
					t.Errorf("status = %s (%s), want %s", st.ClientStatus, st.ClientDescription, tc.status)
				}
				if last := h.rec.last(); last == nil || last.ClientStatus != tc.status {
					t.Errorf("last update sent = %+v, want status %s", last, tc.status)
				}
				if tc.check != nil {
					tc.check(t, st)
				}
				h.ar.Destroy()
			})
		})
	}
}

func hasEvent(st *structs.TaskState, typ string) bool {
	return slices.Contains(types(st), typ)
}

// findEvent returns the first event of type typ, or an empty event.
func findEvent(st *structs.TaskState, typ string) *structs.TaskEvent {
	for _, e := range st.Events {
		if e.Type == typ {
			return e
		}
	}
	return &structs.TaskEvent{}
}
