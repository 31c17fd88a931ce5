package taskrunner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// fakeVarServer serves VarGet as the servers do: a blocking query waits
// for a write past its index.
type fakeVarServer struct {
	mu      sync.Mutex // guards the fields below
	index   uint64
	vars    map[string]structs.VariableItems
	changed chan struct{}
}

func newFakeVarServer() *fakeVarServer {
	return &fakeVarServer{index: 1, vars: map[string]structs.VariableItems{}, changed: make(chan struct{})}
}

func (f *fakeVarServer) put(path string, items structs.VariableItems) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.vars[path] = items
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeVarServer) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	r, ok := req.(*structs.VariablesReadRequest)
	if !ok {
		return nil, errors.New("unexpected method " + m.Name())
	}
	for {
		f.mu.Lock()
		idx, ch := f.index, f.changed
		items, found := f.vars[r.Path]
		f.mu.Unlock()
		if r.MinQueryIndex == 0 || r.MinQueryIndex < idx {
			resp := &structs.VariablesReadResponse{QueryMeta: structs.QueryMeta{Index: idx, KnownLeader: true}}
			if found {
				resp.Data = &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: r.Namespace, Path: r.Path}, Items: items}
			}
			return resp, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// The template tests run on the real clock, not in synctest bubbles: in
// a bubble, consul-template's watch goroutines interleave with a template
// stop so that one of them, now and then (about 1 in 500 runs under
// load), takes a read that failed at the stop over the stop itself and
// blocks for ever reporting it (consul-template v0.41.1 watch/view.go,
// View.poll's unguarded send on serverErrCh): a deadlock of the bubble.
// They wait on the task's state changes; two conditions without an event
// of their own are polled (waitFor).

// waitFor polls cond, for a condition of the template goroutines that
// nothing signals (a driver's received signal, the watch resumed); the
// deadline is a bound for a hung test only.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hungBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// templateHarness runs a task whose templates read vars.
func templateHarness(t *testing.T, task *structs.Task, vars *fakeVarServer, driver *mock.Driver, db *state.MemDB) *harness {
	t.Helper()
	for _, tm := range task.Templates {
		tm.Canonicalize()
	}
	h := newHarness(t, testAlloc(structs.JobTypeService, task), driver, db)
	h.tr.templates.cfg = &TemplateConfig{RPC: vars}
	return h
}

func tmplTask(mode string) *structs.Task {
	return &structs.Task{Config: map[string]any{}, Templates: []*structs.Template{
		{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/job" }}{{ .v }}{{ end }}`, DestPath: "local/v",
			ChangeMode: mode, ChangeSignal: "SIGHUP"},
		{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/job/group/web" }}APP_V={{ .v }}{{ end }}`, DestPath: "secrets/app.env",
			Envvars: true, ChangeMode: structs.TemplateChangeModeNoop},
	}}
}

func invocationEnv(tr *TaskRunner) map[string]string {
	if c := tr.Invocation(); c != nil {
		return c.Env
	}
	return nil
}

func hasTemplateEvent(tr *TaskRunner, prefix string) bool {
	for _, e := range tr.TaskState().Events {
		if e.Type == structs.TaskTemplate && strings.HasPrefix(e.Message, prefix) {
			return true
		}
	}
	return false
}

func TestTemplateHookBlocksThenRestartsOnChange(t *testing.T) {
	vars := newFakeVarServer()
	vars.put("nomad/jobs/job/group/web", structs.VariableItems{"v": "e1"})
	h := templateHarness(t, tmplTask(structs.TemplateChangeModeRestart), vars, nil, nil)
	go h.tr.Run()
	waitState(t, h.tr, "the Missing event", func(*structs.TaskState) bool { return hasTemplateEvent(h.tr, `Missing: nomadVar "nomad/jobs/job"`) })
	if st := h.tr.TaskState(); st.State == structs.TaskStateRunning {
		t.Fatal("task started before its template rendered")
	}
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "1"})
	waitState(t, h.tr, "running", isRunning)
	if env := invocationEnv(h.tr); env["APP_V"] != "e1" {
		t.Fatalf("env APP_V = %q, want the env template's value", env["APP_V"])
	}
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "2"})
	waitState(t, h.tr, "the restart", func(st *structs.TaskState) bool {
		return st.Restarts == 1 && st.State == structs.TaskStateRunning
	})
	ev := findEvent(h.tr.TaskState(), structs.TaskRestartSignal)
	if ev == nil || !strings.Contains(ev.RestartReason, "local/v re-rendered") {
		t.Fatalf("restart event = %+v", ev)
	}
	// A noop template's change restarts nothing.
	vars.put("nomad/jobs/job/group/web", structs.VariableItems{"v": "e2"})
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "2"}) // same content
	if err := h.tr.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if st := h.tr.TaskState(); st.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", st.Restarts)
	}
}

func TestTemplateHookSignals(t *testing.T) {
	vars := newFakeVarServer()
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "1"})
	vars.put("nomad/jobs/job/group/web", structs.VariableItems{"v": "e1"})
	h := templateHarness(t, tmplTask(structs.TemplateChangeModeSignal), vars, nil, nil)
	h.tr.Task().Templates[0].Splay = 0
	go h.tr.Run()
	waitState(t, h.tr, "running", isRunning)
	id := h.tr.Invocation().ID
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "2"})
	waitFor(t, "the signal", func() bool { return slices.Contains(h.driver.ReceivedSignals(id), "SIGHUP") })
	if err := h.tr.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if st := h.tr.TaskState(); st.Restarts != 0 {
		t.Errorf("restarts = %d, want none", st.Restarts)
	}
}

func TestTemplateHookAgentRestartKeepsUnchangedTask(t *testing.T) {
	driver := mock.New(nil)
	defer driver.Shutdown()
	db := state.NewMemDB()
	vars := newFakeVarServer()
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "1"})
	vars.put("nomad/jobs/job/group/web", structs.VariableItems{"v": "e1"})
	task := tmplTask(structs.TemplateChangeModeRestart)
	task.Templates[0].Splay = 0
	h := templateHarness(t, task, vars, driver, db)
	go h.tr.Run()
	waitState(t, h.tr, "running", isRunning)
	h.tr.Shutdown() // the agent stops; the task runs on

	// A new agent: nothing changed, so the task is not restarted, and
	// the watch resumes: a change restarts it.
	tr2, err := New(&Config{
		Alloc: h.alloc, Task: h.alloc.Job.TaskGroups[0].Tasks[0], AllocDir: h.dir, Driver: driver,
		StateDB: db, Node: &structs.Node{ID: "node1", Datacenter: "dc1"}, KillGrace: 200 * time.Millisecond,
		Templates: &TemplateConfig{RPC: vars},
	})
	if err != nil {
		t.Fatal(err)
	}
	h2 := &harness{tr: tr2, driver: driver, db: db, alloc: h.alloc, dir: h.dir}
	if err := h2.tr.Restore(); err != nil {
		t.Fatal(err)
	}
	go h2.tr.Run()
	waitFor(t, "the watch to resume", func() bool {
		h2.tr.templates.mu.Lock()
		defer h2.tr.templates.mu.Unlock()
		return h2.tr.templates.done != nil
	})
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "2"})
	waitState(t, h2.tr, "the restart", func(st *structs.TaskState) bool {
		return st.Restarts == 1 && st.State == structs.TaskStateRunning
	})
	var reasons []string
	for _, e := range h2.tr.TaskState().Events {
		if e.Type == structs.TaskRestartSignal {
			reasons = append(reasons, e.RestartReason)
		}
	}
	if len(reasons) != 1 {
		t.Errorf("restarts after the agent restart: %q, want only the change's", reasons)
	}
	if err := h2.tr.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateHookRenderFailureFailsSetup(t *testing.T) {
	vars := newFakeVarServer()
	task := &structs.Task{Config: map[string]any{}, Templates: []*structs.Template{
		{EmbeddedTmpl: `{{ parseInt "x" }}`, DestPath: "local/v"},
	}}
	h := templateHarness(t, task, vars, nil, nil)
	h.tr.Run()
	st := h.tr.TaskState()
	if st.State != structs.TaskStateDead || !st.Failed {
		t.Fatalf("state = %s failed = %v", st.State, st.Failed)
	}
	if !hasTemplateEvent(h.tr, "Template failed: template 1 (local/v)") {
		t.Errorf("events = %q", eventTypes(st))
	}
}

func TestTemplateHookAgentRestartRewritesLostFile(t *testing.T) {
	driver := mock.New(nil)
	defer driver.Shutdown()
	db := state.NewMemDB()
	vars := newFakeVarServer()
	vars.put("nomad/jobs/job", structs.VariableItems{"v": "1"})
	vars.put("nomad/jobs/job/group/web", structs.VariableItems{"v": "e1"})
	task := tmplTask(structs.TemplateChangeModeRestart)
	task.Templates[0].Splay = 0
	h := templateHarness(t, task, vars, driver, db)
	go h.tr.Run()
	waitState(t, h.tr, "running", isRunning)
	h.tr.Shutdown()
	// The rendered file is gone when the agent comes back: rendering it
	// again is a change, which restarts the task.
	if err := os.Remove(filepath.Join(h.dir.NewTaskDir("web").Dir, "local/v")); err != nil {
		t.Fatal(err)
	}
	tr2, err := New(&Config{
		Alloc: h.alloc, Task: h.alloc.Job.TaskGroups[0].Tasks[0], AllocDir: h.dir, Driver: driver,
		StateDB: db, Node: &structs.Node{ID: "node1", Datacenter: "dc1"}, KillGrace: 200 * time.Millisecond,
		Templates: &TemplateConfig{RPC: vars},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Restore(); err != nil {
		t.Fatal(err)
	}
	go tr2.Run()
	waitState(t, tr2, "the restart", func(st *structs.TaskState) bool {
		return st.Restarts == 1 && st.State == structs.TaskStateRunning
	})
	if err := tr2.Kill(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateHookChangeScript(t *testing.T) {
	for _, tc := range []struct {
		name        string
		exitCode    int
		failOnError bool
		wantEvent   string
		wantKilled  bool
	}{
		{name: "succeeds", exitCode: 0, wantEvent: "Template ran change script /bin/reload"},
		{name: "fails", exitCode: 3, wantEvent: "Template failed to run change script /bin/reload: exit code 3"},
		{name: "fails the task", exitCode: 3, failOnError: true, wantEvent: "Template failed to run change script", wantKilled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := newFakeVarServer()
			vars.put("nomad/jobs/job", structs.VariableItems{"v": "1"})
			task := &structs.Task{Config: map[string]any{"exec_command": map[string]any{"exit_code": tc.exitCode}},
				Templates: []*structs.Template{{
					EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/job" }}{{ .v }}{{ end }}`, DestPath: "local/v",
					ChangeMode:   structs.TemplateChangeModeScript,
					ChangeScript: &structs.ChangeScript{Command: "/bin/reload", Args: []string{"-q"}, FailOnError: tc.failOnError},
				}}}
			h := templateHarness(t, task, vars, nil, nil)
			go h.tr.Run()
			waitState(t, h.tr, "running", isRunning)
			vars.put("nomad/jobs/job", structs.VariableItems{"v": "2"})
			waitState(t, h.tr, "the script's event", func(*structs.TaskState) bool { return hasTemplateEvent(h.tr, tc.wantEvent) })
			if tc.wantKilled {
				waitClosed(t, "the task to be killed", h.tr.WaitCh())
				return
			}
			if err := h.tr.Kill(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if st := h.tr.TaskState(); st.Restarts != 0 {
				t.Errorf("restarts = %d", st.Restarts)
			}
		})
	}
}
