package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// TaskAPISocketName is the task API's socket in a task's secrets
// directory (Nomad's Task API).
const TaskAPISocketName = "api.sock"

// maxSocketPath is the size of sun_path on Linux, with its NUL.
const maxSocketPath = 108

var (
	_ prestartHook = (*taskAPIHook)(nil)
	_ stopHook     = (*taskAPIHook)(nil)
)

// stopHook is told when the task runner is done with its task for good
// (the task will not start again) or the agent shuts down.
type stopHook interface {
	taskHook
	Stop()
}

// taskAPIHook serves the task API: a Unix socket, secrets/api.sock, that
// forwards HTTP requests to the agent's HTTP API, so that a task whose
// network cannot reach the agent still can. Every request must carry a
// token (its workload identity, or an ACL token) even when ACLs are
// disabled: the agent's API then serves a workload identity as its task
// only (httpapi workloadGate). The socket is made before each start (a
// restarted agent makes it again) and its server stops with the runner.
type taskAPIHook struct {
	// agentURL is the agent's HTTP API ("http://127.0.0.1:4646"); empty:
	// no task API.
	agentURL string
	// transport sends the forwarded requests; nil: the default one.
	transport http.RoundTripper
	logger    *slog.Logger

	mu  sync.Mutex // guards the fields below
	srv *http.Server
	wg  sync.WaitGroup
}

// Name returns "task_api".
func (*taskAPIHook) Name() string { return "task_api" }

// Prestart listens on the socket (once per runner) and sets
// NOMAD_UNIX_ADDR.
func (h *taskAPIHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	if h.agentURL == "" {
		return nil
	}
	target, err := url.Parse(h.agentURL)
	if err != nil {
		return fmt.Errorf("task API: agent address %q: %w", h.agentURL, err)
	}
	sock := filepath.Join(req.TaskDir.SecretsDir, TaskAPISocketName)
	if len(sock) >= maxSocketPath {
		// The task still runs; it reaches the agent over the network.
		h.logger.Warn("task API not served: the socket's path is too long for a Unix socket; use a shorter data_dir",
			"path", sock, "limit", maxSocketPath)
		return nil
	}
	resp.Env = map[string]string{"NOMAD_UNIX_ADDR": "unix://" + sock}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv != nil {
		return nil
	}
	// A socket left by an agent that stopped is replaced; anything else
	// there (a task's file) is an error.
	if fi, err := os.Lstat(sock); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return fmt.Errorf("task API: %s exists and is not a socket: remove it", sock)
		}
		if err := os.Remove(sock); err != nil {
			return fmt.Errorf("task API: remove stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("task API: listen on %s: %w", sock, err)
	}
	// The secrets directory (0700, the task user's) guards the socket;
	// the socket itself lets the task's user connect.
	if err := os.Chmod(sock, 0o666); err != nil {
		_ = ln.Close()
		return fmt.Errorf("task API: %w", err)
	}
	h.srv = &http.Server{
		Handler:           taskAPIHandler(target, h.transport),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(h.logger.Handler(), slog.LevelDebug),
	}
	srv := h.srv
	h.wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.logger.Warn("task API stopped", "error", err)
		}
	})
	return nil
}

// Stop closes the socket's server and waits for it.
func (h *taskAPIHook) Stop() {
	h.mu.Lock()
	srv := h.srv
	h.srv = nil
	h.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	h.wg.Wait()
}

// taskAPIHandler forwards authenticated requests to the agent's API.
func taskAPIHandler(target *url.URL, transport http.RoundTripper) http.Handler {
	rp := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "task API: the agent's HTTP API is unreachable: "+err.Error(), http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasToken(r) {
			http.Error(w, "Permission denied: the task API needs a token: send the task's workload identity "+
				"(identity { env = true } gives it as NOMAD_TOKEN) as X-Nomad-Token or Authorization: Bearer", http.StatusForbidden)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// hasToken reports whether a request carries a token.
func hasToken(r *http.Request) bool {
	if r.Header.Get("X-Nomad-Token") != "" {
		return true
	}
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && strings.TrimSpace(v) != ""
}
