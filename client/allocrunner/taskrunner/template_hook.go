package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/client/template"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TemplateConfig is what the template hook needs from the agent.
type TemplateConfig struct {
	// RPC reads variables from the servers (the node's connection).
	RPC rpcapi.Conn
	// ServicesURL is the agent's HTTP API, for service reads.
	ServicesURL string
	// ServicesTransport sends service reads (an HTTPS agent's TLS); nil:
	// the default transport.
	ServicesTransport http.RoundTripper
	// ServicesToken is sent with those reads (the node's secret ID, which
	// the API takes as a token that reads jobs and services when ACLs are
	// enabled).
	ServicesToken string
	// Client is the agent's template block; nil: defaults.
	Client *template.ClientConfig
	// RestartLeases paces the restarts a re-render causes across the
	// group's allocations (update.max_parallel at a time); nil: only the
	// templates' splay spreads them.
	RestartLeases RestartLeaser
}

// templateMissingGrace is how long the first render may wait before the
// hook says what it waits for: data read for the first time is usually
// there within it.
const templateMissingGrace = 2 * time.Second

// templateTask is what the template hook does to its task after a
// re-render; the TaskRunner implements it.
type templateTask interface {
	eventEmitter
	Restart(ctx context.Context, ev *structs.TaskEvent) error
	RequestKill(ev *structs.TaskEvent)
	TaskState() *structs.TaskState
	allocAndTask() (*structs.Allocation, *structs.Task)
	waitRestarted(ctx context.Context, restarts uint64) error
	signalTask(ctx context.Context, sig, reason string) error
	execTask(ctx context.Context, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error)
}

var _ prestartHook = (*templateHook)(nil)

// templateHook renders the task's templates (client/template) before the
// task starts, blocking while what they read is missing (a Template event
// says what), and puts the env = true files in the task's environment. It
// keeps watching after the start: a re-render that changes a file applies
// its template's change_mode (restart, signal, script; noop does
// nothing), after a random splay; a restart waits for the group's restart
// lease (template_restart.go), so that at most update.max_parallel
// allocations of the group restart at once. The watch lasts as long as the task's
// run: stop ends it. An agent that restarts and finds the task running
// resumes the watch (resume): a first render that leaves the files as
// they are does nothing.
type templateHook struct {
	cfg    *TemplateConfig
	task   templateTask
	logger *slog.Logger

	// mu guards the fields below; the run loop sets them, stop (also on
	// the run loop, at the end of Run) clears them.
	mu      sync.Mutex
	manager *template.Manager
	tmpls   []*structs.Template // the Manager's templates
	cancel  context.CancelFunc
	done    chan struct{}
}

// Name returns "template".
func (*templateHook) Name() string { return "template" }

// Prestart renders the templates (the first time) and returns the
// environment the env templates hold.
func (h *templateHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	task := req.Task
	if len(task.Templates) == 0 {
		return nil
	}
	m, err := h.ensure(req.Alloc, task, req.TaskDir.Dir, req.Env, false)
	if err != nil {
		return err
	}
	err = m.WaitRendered(ctx, templateMissingGrace, func(missing []string) {
		h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage("Missing: " + strings.Join(missing, ", ")))
	})
	switch {
	case err == nil:
	case ctx.Err() != nil, errors.Is(err, template.ErrStopped):
		return fmt.Errorf("render templates: %w", err)
	default:
		h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage("Template failed: " + err.Error()))
		return fmt.Errorf("render templates: %w", err)
	}
	h.watch(m)
	env, err := templateEnv(task, req.TaskDir.Dir)
	if err != nil {
		return err
	}
	if len(env) > 0 {
		resp.Env = env
	}
	return nil
}

// templateEnv reads the env = true templates' files.
func templateEnv(task *structs.Task, taskDir string) (map[string]string, error) {
	var env map[string]string
	for i, t := range task.Templates {
		if !t.Envvars {
			continue
		}
		dest, err := structs.TemplateDestination(t.DestPath)
		if err != nil {
			return nil, err
		}
		b, err := template.ReadFile(taskDir, dest)
		if err != nil {
			return nil, fmt.Errorf("template %d (%s): read the environment: %w", i+1, t.DestPath, err)
		}
		kv, err := template.ParseEnv(b)
		if err != nil {
			return nil, fmt.Errorf("template %d (%s) has env = true but is not an environment file: %w", i+1, t.DestPath, err)
		}
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, kv)
	}
	return env, nil
}

// ensure returns the task's Manager, making and starting it the first
// time (running: the task already runs).
func (h *templateHook) ensure(alloc *structs.Allocation, task *structs.Task, taskDir string, env map[string]string, running bool) (*template.Manager, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.manager != nil {
		return h.manager, nil
	}
	if h.cfg == nil || h.cfg.RPC == nil {
		return nil, errors.New("templates cannot render: this agent has no connection to the servers")
	}
	m, err := template.New(template.Config{
		Logger:            h.logger,
		RPC:               h.cfg.RPC,
		ServicesURL:       h.cfg.ServicesURL,
		ServicesTransport: h.cfg.ServicesTransport,
		ServicesToken:     h.cfg.ServicesToken,
		Identity: structs.WorkloadIdentity{
			Namespace: alloc.Namespace, JobID: alloc.JobID, Group: alloc.TaskGroup, Task: task.Name,
		},
		TaskDir:   taskDir,
		Templates: task.Templates,
		Env:       env,
		Client:    h.cfg.Client,
		Running:   running,
	})
	if err != nil {
		return nil, err
	}
	m.Start()
	h.manager, h.tmpls = m, task.Templates
	return m, nil
}

// resume starts the watch of a task the agent found running after a
// restart.
func (h *templateHook) resume(alloc *structs.Allocation, task *structs.Task, taskDir string, env map[string]string) {
	if len(task.Templates) == 0 {
		return
	}
	m, err := h.ensure(alloc, task, taskDir, env, true)
	if err != nil {
		h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage("Template failed: " + err.Error()))
		return
	}
	h.watch(m)
}

// watch starts the goroutine that applies re-renders, once per Manager.
func (h *templateHook) watch(m *template.Manager) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		h.follow(ctx, m)
	}(h.done)
}

// follow applies the Manager's changes until ctx ends.
func (h *templateHook) follow(ctx context.Context, m *template.Manager) {
	for {
		select {
		case c := <-m.Changes():
			changed := map[int]bool{c.Index: true}
			for more := true; more; {
				select {
				case c := <-m.Changes():
					changed[c.Index] = true
				default:
					more = false
				}
			}
			h.apply(ctx, changed)
		case err := <-m.Failed():
			h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage("Template failed: " + err.Error()))
			h.task.RequestKill(structs.NewTaskEvent(structs.TaskKilling).SetKillReason("Template failed: " + err.Error()))
			return
		case <-ctx.Done():
			return
		}
	}
}

// apply does what the changed templates' change modes ask: one restart
// when any asks for it, else each signal once and each script.
func (h *templateHook) apply(ctx context.Context, changed map[int]bool) {
	h.mu.Lock()
	tmpls := h.tmpls
	h.mu.Unlock()
	var restart bool
	var splay time.Duration
	signals := map[string]bool{}
	var scripts []*structs.ChangeScript
	var dests []string
	for i := range changed {
		if i >= len(tmpls) {
			continue
		}
		t := tmpls[i]
		dests = append(dests, t.DestPath)
		splay = max(splay, t.Splay)
		switch t.ChangeMode {
		case structs.TemplateChangeModeRestart, "":
			restart = true
		case structs.TemplateChangeModeSignal:
			signals[t.ChangeSignal] = true
		case structs.TemplateChangeModeScript:
			scripts = append(scripts, t.ChangeScript)
		}
	}
	if !restart && len(signals) == 0 && len(scripts) == 0 {
		return // noop
	}
	if splay > 0 {
		timer := time.NewTimer(rand.N(splay))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return
		}
	}
	what := "template " + strings.Join(dests, ", ") + " re-rendered"
	if restart {
		h.restartLeased(ctx, what) // template_restart.go
		return
	}
	for sig := range signals {
		if err := h.task.signalTask(ctx, sig, what); err != nil {
			h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage(fmt.Sprintf("Template failed to send signal %s: %v", sig, err)))
		}
	}
	for _, s := range scripts {
		h.runScript(ctx, s, what)
	}
}

// runScript runs a change script inside the task; a failure is an event,
// and kills the task when the script says fail_on_error.
func (h *templateHook) runScript(ctx context.Context, s *structs.ChangeScript, what string) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = structs.DefaultChangeScriptTimeout
	}
	cmd := append([]string{s.Command}, s.Args...)
	res, err := h.task.execTask(ctx, cmd, timeout)
	if err == nil && res != nil && res.ExitResult != nil && !res.ExitResult.Successful() {
		err = fmt.Errorf("exit code %d", res.ExitResult.ExitCode)
	}
	if err == nil {
		h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage(fmt.Sprintf("Template ran change script %s: %s", s.Command, what)))
		return
	}
	msg := fmt.Sprintf("Template failed to run change script %s: %v", s.Command, err)
	h.task.EmitEvent(structs.NewTaskEvent(structs.TaskTemplate).SetMessage(msg))
	if s.FailOnError {
		h.task.RequestKill(structs.NewTaskEvent(structs.TaskKilling).SetKillReason(msg))
	}
}

// stop ends the watch and the Manager, and waits for them.
func (h *templateHook) stop() {
	h.mu.Lock()
	m, cancel, done := h.manager, h.cancel, h.done
	h.manager, h.cancel, h.done = nil, nil, nil
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if m != nil {
		m.Stop()
	}
}

// resumeTemplates resumes the watch of the templates of a task the agent
// found running.
func (tr *TaskRunner) resumeTemplates() {
	alloc, task := tr.allocAndTask()
	if len(task.Templates) == 0 {
		return
	}
	env := tr.buildEnv(&PrestartRequest{Alloc: alloc, Task: task, AllocDir: tr.allocDir, TaskDir: tr.taskDir}, tr.node)
	if extra, err := templateEnv(task, tr.taskDir.Dir); err == nil {
		maps.Copy(env, extra)
	}
	tr.templates.resume(alloc, task, tr.taskDir.Dir, env)
}

// signalTask sends a signal to the running task for a reason, recorded in
// the Signaling event.
func (tr *TaskRunner) signalTask(ctx context.Context, sig, reason string) error {
	tr.mu.RLock()
	h := tr.local.TaskHandle
	running := tr.state.State == structs.TaskStateRunning
	tr.mu.RUnlock()
	if h == nil || h.Config == nil || !running {
		return structs.NewError(structs.KindConflict, "task %q is not running", tr.taskName)
	}
	tr.EmitEvent(structs.NewTaskEvent(structs.TaskSignaling).SetTaskSignal(sig).SetTaskSignalReason(reason))
	err := untrusted(ctx, "signal task", func(ctx context.Context) error { return tr.driver.SignalTask(ctx, h.Config.ID, sig) })
	if err != nil {
		return fmt.Errorf("signal task %q: %w", tr.taskName, err)
	}
	return nil
}

// execTask runs a command inside the running task, through its driver.
func (tr *TaskRunner) execTask(ctx context.Context, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	tr.mu.RLock()
	h := tr.local.TaskHandle
	running := tr.state.State == structs.TaskStateRunning
	tr.mu.RUnlock()
	if h == nil || h.Config == nil || !running {
		return nil, structs.NewError(structs.KindConflict, "task %q is not running", tr.taskName)
	}
	var res *drivers.ExecTaskResult
	err := untrusted(ctx, "exec in task", func(ctx context.Context) error {
		var err error
		res, err = tr.driver.ExecTask(ctx, h.Config.ID, cmd, timeout)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("exec in task %q: %w", tr.taskName, err)
	}
	return res, nil
}
