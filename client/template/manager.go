package template

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	ctconfig "github.com/hashicorp/consul-template/config"
	ctmanager "github.com/hashicorp/consul-template/manager"
	"github.com/hashicorp/consul-template/renderer"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// DefaultFunctionDenylist are the functions templates may not call unless
// the agent's template block says otherwise (as Nomad's default): they
// run programs or write files as the agent.
var DefaultFunctionDenylist = []string{"plugin", "writeToFile"}

// DefaultBlockQueryWait is how long a template's read waits for a change
// (Nomad's block_query_wait default).
const DefaultBlockQueryWait = 5 * time.Minute

// ClientConfig is what the agent's template block sets for every task.
type ClientConfig struct {
	// FunctionDenylist replaces DefaultFunctionDenylist when not nil.
	FunctionDenylist []string
	// DisableSandbox lets the file function read outside the task's
	// directory.
	DisableSandbox bool
	// BlockQueryWaitTime is the wait of the blocking queries (0: 5 min).
	BlockQueryWaitTime time.Duration
	// Wait is the wait of templates that set none; nil: none.
	Wait *structs.WaitConfig
	// WaitBounds clamps every template's wait; nil: none.
	WaitBounds *structs.WaitConfig
	// NomadRetry is how reads that fail are retried (Attempts 0:
	// forever).
	NomadRetry RetryConfig
}

// RetryConfig is the retry of failed reads: Attempts (0: forever), with
// a backoff doubling from Backoff up to MaxBackoff.
type RetryConfig struct {
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// Config configures a Manager for one task.
type Config struct {
	Logger *slog.Logger
	// RPC reads variables from the servers with the node's identity.
	RPC rpcapi.Conn
	// ServicesURL is the agent's HTTP API, for service reads; "" if none.
	ServicesURL string
	// ServicesTransport sends service reads; nil: the default transport.
	ServicesTransport http.RoundTripper
	// ServicesToken is the ACL token of those reads (the node's secret).
	ServicesToken string
	// Identity is the task's: it bounds what its templates read.
	Identity structs.WorkloadIdentity
	// TaskDir is the task's directory: templates render beneath it.
	TaskDir string
	// Templates are the task's templates (canonicalized).
	Templates []*structs.Template
	// Env is the task's environment, for the env function.
	Env map[string]string
	// Client is the agent's template configuration; nil: defaults.
	Client *ClientConfig
	// Running says the task already runs (the agent restarted and found
	// it): a first render that changes a file is then a change, handled
	// by the template's change_mode; one that changes nothing is not.
	Running bool
}

// Change is a template whose file a render rewrote after the task
// started (or after the agent found it running).
type Change struct {
	// Index is the template's index in the task's templates.
	Index int
}

// Manager renders a task's templates and watches what they read. Create
// it with New, Start it, and Stop it when the task is gone.
type Manager struct {
	cfg      Config
	logger   *slog.Logger
	listener *memListener
	server   *http.Server
	runners  []*ctmanager.Runner
	// changes carries the rewritten templates to the task runner.
	changes chan Change
	// failed carries a runner's fatal error (the first one).
	failed chan error
	// notify is signalled (without blocking) when a template renders or
	// its missing data changes.
	notify chan struct{}
	stopCh chan struct{}
	stop   sync.Once
	wg     sync.WaitGroup

	mu    sync.Mutex // guards the fields below
	state []tmplState
}

// tmplState is what the Manager knows of one template.
type tmplState struct {
	rendered bool
	missing  []string
	// serverErr is the last error reading the template's data.
	serverErr string
}

// New builds the consul-template runners of cfg's templates. It starts
// nothing; a template that does not parse fails here.
func New(cfg Config) (*Manager, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		cfg.Client = &ClientConfig{}
	}
	m := &Manager{
		cfg:      cfg,
		logger:   logger,
		listener: newMemListener(),
		changes:  make(chan Change, len(cfg.Templates)),
		failed:   make(chan error, 1),
		notify:   make(chan struct{}, 1),
		stopCh:   make(chan struct{}),
		state:    make([]tmplState, len(cfg.Templates)),
	}
	m.server = &http.Server{
		Handler:           &Handler{RPC: cfg.RPC, Identity: cfg.Identity, ServicesURL: cfg.ServicesURL, ServicesTransport: cfg.ServicesTransport, ServicesToken: cfg.ServicesToken, Logger: logger},
		ReadHeaderTimeout: time.Minute,
	}
	for i, t := range cfg.Templates {
		r, err := m.newRunner(i, t)
		if err != nil {
			return nil, fmt.Errorf("template %d (%s): %w", i+1, t.DestPath, err)
		}
		m.runners = append(m.runners, r)
	}
	return m, nil
}

// newRunner configures consul-template for one template.
func (m *Manager) newRunner(i int, t *structs.Template) (*ctmanager.Runner, error) {
	dest, err := structs.TemplateDestination(t.DestPath)
	if err != nil {
		return nil, err
	}
	perms, err := structs.TemplatePerms(t.Perms)
	if err != nil {
		return nil, err
	}
	contents := t.EmbeddedTmpl
	if t.SourcePath != "" {
		b, err := m.readSource(t.SourcePath)
		if err != nil {
			return nil, err
		}
		contents = string(b)
	}
	if contents == "" {
		// consul-template refuses an empty template; render an empty file.
		contents = `{{ "" }}`
	}
	fw := &fileWriter{taskDir: m.cfg.TaskDir, dest: dest, perms: os.FileMode(perms), uid: t.Uid, gid: t.Gid}
	cc := m.cfg.Client
	denylist := DefaultFunctionDenylist
	if cc.FunctionDenylist != nil {
		denylist = cc.FunctionDenylist
	}
	sandbox := m.cfg.TaskDir
	if cc.DisableSandbox {
		sandbox = ""
	}
	tc := &ctconfig.TemplateConfig{
		Contents:         ctconfig.String(contents),
		Destination:      ctconfig.String(dest),
		ErrMissingKey:    ctconfig.Bool(t.ErrMissingKey),
		LeftDelim:        ctconfig.String(t.LeftDelim),
		RightDelim:       ctconfig.String(t.RightDelim),
		FunctionDenylist: slices.Clone(denylist),
		SandboxPath:      ctconfig.String(sandbox),
		ExtFuncMap:       envFuncs(m.cfg.Env),
		Wait:             waitConfig(t.Wait, cc),
	}
	c := ctconfig.DefaultConfig()
	c.Templates = &ctconfig.TemplateConfigs{tc}
	c.Once = t.Once
	c.Nomad.Address = ctconfig.String("http://drover-template")
	c.Nomad.Namespace = ctconfig.String(m.cfg.Identity.Namespace)
	c.Nomad.Enabled = ctconfig.Bool(true)
	c.Nomad.Transport.CustomDialer = m.listener
	retry := cc.NomadRetry
	if retry.Backoff <= 0 {
		retry.Backoff = 250 * time.Millisecond
	}
	if retry.MaxBackoff <= 0 {
		retry.MaxBackoff = time.Minute
	}
	c.Nomad.Retry = &ctconfig.RetryConfig{
		Enabled: ctconfig.Bool(true), Attempts: ctconfig.Int(retry.Attempts),
		Backoff: ctconfig.TimeDuration(retry.Backoff), MaxBackoff: ctconfig.TimeDuration(retry.MaxBackoff),
	}
	c.BlockQueryWaitTime = ctconfig.TimeDuration(DefaultBlockQueryWait)
	if cc.BlockQueryWaitTime > 0 {
		c.BlockQueryWaitTime = ctconfig.TimeDuration(cc.BlockQueryWaitTime)
	}
	c.RendererFunc = func(in *renderer.RenderInput) (*renderer.RenderResult, error) {
		wrote, err := fw.write(in.Contents)
		if err != nil {
			return nil, err
		}
		m.rendered(i, wrote)
		return &renderer.RenderResult{DidRender: wrote, WouldRender: true, Contents: in.Contents}, nil
	}
	c.ReaderFunc = func(name string) ([]byte, error) { return m.readSource(name) }
	c.Finalize()
	r, err := ctmanager.NewRunner(c, false)
	if err != nil {
		return nil, err
	}
	r.Env = maps.Clone(m.cfg.Env)
	return r, nil
}

// readSource reads a template file: beneath the task's directory (no
// link followed), or anywhere when the agent disables the sandbox.
func (m *Manager) readSource(name string) ([]byte, error) {
	if m.cfg.Client.DisableSandbox && strings.HasPrefix(name, "/") {
		return os.ReadFile(name)
	}
	rel, err := structs.TemplateDestination(name)
	if err != nil {
		return nil, fmt.Errorf("source %q: %w", name, err)
	}
	return ReadFile(m.cfg.TaskDir, rel)
}

// waitConfig is a template's wait (or the agent's default), clamped to the
// agent's bounds; nil when none.
func waitConfig(w *structs.WaitConfig, cc *ClientConfig) *ctconfig.WaitConfig {
	if w == nil {
		w = cc.Wait
	}
	if w == nil || w.Min == nil && w.Max == nil {
		return nil
	}
	var lo, hi time.Duration
	if w.Min != nil {
		lo = *w.Min
	}
	if w.Max != nil {
		hi = *w.Max
	} else {
		hi = 4 * lo
	}
	if b := cc.WaitBounds; b != nil {
		if b.Min != nil {
			lo, hi = max(lo, *b.Min), max(hi, *b.Min)
		}
		if b.Max != nil {
			lo, hi = min(lo, *b.Max), min(hi, *b.Max)
		}
	}
	return &ctconfig.WaitConfig{Enabled: ctconfig.Bool(lo > 0 || hi > 0), Min: ctconfig.TimeDuration(lo), Max: ctconfig.TimeDuration(hi)}
}

// envFuncs are env, mustEnv and envOrDefault reading only the task's
// environment: consul-template's fall back to the agent's own, which a
// task must not read.
func envFuncs(env map[string]string) map[string]any {
	env = maps.Clone(env)
	return map[string]any{
		"env": func(k string) (string, error) { return env[k], nil },
		"mustEnv": func(k string) (string, error) {
			if v := env[k]; v != "" {
				return v, nil
			}
			return "", fmt.Errorf("environment variable %s is not set", k)
		},
		"envOrDefault": func(k, def string) (string, error) {
			if v := env[k]; v != "" {
				return v, nil
			}
			return def, nil
		},
	}
}

// rendered records a render of template i (wrote: its file changed) and
// queues a change when the task is past its first render.
func (m *Manager) rendered(i int, wrote bool) {
	m.mu.Lock()
	first := !m.state[i].rendered
	m.state[i].rendered = true
	m.state[i].missing = nil
	m.state[i].serverErr = ""
	m.mu.Unlock()
	if wrote && (!first || m.cfg.Running) {
		select {
		case m.changes <- Change{Index: i}:
		default: // a change of this manager is pending: it covers this one
		}
	}
	m.signal()
}

func (m *Manager) signal() {
	select {
	case m.notify <- struct{}{}:
	default:
	}
}

// Start starts serving the templates' reads and the runners.
func (m *Manager) Start() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		_ = m.server.Serve(m.listener) // returns when the listener closes
	}()
	for i, r := range m.runners {
		started := make(chan struct{})
		m.wg.Add(2)
		go func() {
			defer m.wg.Done()
			defer close(started)
			r.Start() // returns once stopped, or after sending a fatal error
		}()
		go func() {
			defer m.wg.Done()
			m.pump(i, r, started)
		}()
	}
}

// pump follows one runner until it returns: its render events (for what
// is missing), its errors.
func (m *Manager) pump(i int, r *ctmanager.Runner, started <-chan struct{}) {
	for {
		select {
		case <-r.RenderEventCh():
			var missing []string
			for _, ev := range r.RenderEvents() {
				if ev.MissingDeps != nil {
					for _, d := range ev.MissingDeps.List() {
						missing = append(missing, describeDep(d.String()))
					}
				}
			}
			sort.Strings(missing)
			m.mu.Lock()
			if !m.state[i].rendered {
				m.state[i].missing = missing
			}
			m.mu.Unlock()
			m.signal()
		case err := <-r.ServerErrCh:
			m.mu.Lock()
			m.state[i].serverErr = err.Error()
			m.mu.Unlock()
			m.signal()
		case err := <-r.ErrCh:
			t := m.cfg.Templates[i]
			select {
			case m.failed <- fmt.Errorf("template %d (%s): %w", i+1, t.DestPath, err):
			default:
			}
			m.signal()
		case <-started:
			return
		}
	}
}

var (
	varDep     = regexp.MustCompile(`^nomad\.var\.(?:get|block)\(([^@)]*)(?:@([^.)]*))?`)
	varListDep = regexp.MustCompile(`^nomad\.var\.list\(([^@)]*)`)
	serviceDep = regexp.MustCompile(`^nomad\.service(?:s)?\(([^@)]*)`)
)

// describeDep names a missing dependency as a template calls it.
func describeDep(s string) string {
	if m := varDep.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("nomadVar %q", m[1])
	}
	if m := varListDep.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("nomadVarList %q", m[1])
	}
	if m := serviceDep.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("nomadService %q", m[1])
	}
	return s
}

// Missing returns what the templates not rendered yet wait for, with the
// last read error of each when there was one.
func (m *Manager) Missing() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, s := range m.state {
		if s.rendered {
			continue
		}
		for _, d := range s.missing {
			if s.serverErr != "" {
				d += " (" + s.serverErr + ")"
			}
			out = append(out, d)
		}
	}
	return out
}

// allRendered reports whether every template rendered once.
func (m *Manager) allRendered() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.state {
		if !s.rendered {
			return false
		}
	}
	return true
}

// ErrStopped is returned by WaitRendered when the Manager is stopped.
var ErrStopped = errors.New("templates stopped")

// WaitRendered waits until every template rendered once. After grace,
// and whenever it changes after that, it calls missing with what the
// templates wait for. It returns a render's fatal error, ctx's error, or
// ErrStopped.
func (m *Manager) WaitRendered(ctx context.Context, grace time.Duration, missing func([]string)) error {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	graceOver := false
	var last []string
	for {
		if m.allRendered() {
			return nil
		}
		if graceOver {
			if now := m.Missing(); len(now) > 0 && !slices.Equal(now, last) {
				last = now
				missing(now)
			}
		}
		select {
		case <-m.notify:
		case <-timer.C:
			graceOver = true
		case err := <-m.failed:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-m.stopCh:
			return ErrStopped
		}
	}
}

// Changes carries the templates a render rewrote after the first render
// (see Config.Running).
func (m *Manager) Changes() <-chan Change { return m.changes }

// Failed carries a render's fatal error.
func (m *Manager) Failed() <-chan error { return m.failed }

// Stop stops the runners and waits for their goroutines.
func (m *Manager) Stop() {
	m.stop.Do(func() {
		close(m.stopCh)
		for _, r := range m.runners {
			r.StopImmediately()
		}
		_ = m.server.Close()
		_ = m.listener.Close()
	})
	m.wg.Wait()
}
