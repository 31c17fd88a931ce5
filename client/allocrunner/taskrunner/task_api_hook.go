package taskrunner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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

// TaskAPIListener serves the task API on a socket until stop is called
// (client/taskapi.Server, one for all of a client's tasks).
type TaskAPIListener interface {
	Listen(path string) (stop func(), err error)
}

// taskAPIHook serves the task API: a Unix socket, secrets/api.sock, that
// forwards HTTP requests to the agent's HTTP API, so that a task whose
// network cannot reach the agent still can. Every request must carry a
// token (its workload identity, or an ACL token) even when ACLs are
// disabled: the agent's API then serves a workload identity as its task
// only (httpapi workloadGate). The socket is made before each start (a
// restarted agent makes it again) and closed when the runner stops; the
// client's TaskAPIListener serves it.
type taskAPIHook struct {
	// api serves the socket; nil: no task API.
	api    TaskAPIListener
	logger *slog.Logger

	mu   sync.Mutex // guards the field below
	stop func()     // closes the socket; nil while none is served
}

// Name returns "task_api".
func (*taskAPIHook) Name() string { return "task_api" }

// Prestart listens on the socket (once per runner) and sets
// NOMAD_UNIX_ADDR.
func (h *taskAPIHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	if h.api == nil {
		return nil
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
	if h.stop != nil {
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
	// The secrets directory (0700, the task user's) guards the socket;
	// the socket itself lets the task's user connect.
	stop, err := h.api.Listen(sock)
	if err != nil {
		return err
	}
	h.stop = stop
	return nil
}

// Stop closes the socket.
func (h *taskAPIHook) Stop() {
	h.mu.Lock()
	stop := h.stop
	h.stop = nil
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
}
