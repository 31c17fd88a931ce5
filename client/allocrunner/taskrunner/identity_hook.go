package taskrunner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/drivers/shared/beneath"
	"github.com/drover-io/drover/structs"
)

// IdentitySigner has the servers sign a task's workload identities, with
// the node's credentials (the client implements it).
type IdentitySigner interface {
	SignIdentities(ctx context.Context, allocID, task string) ([]*structs.SignedIdentity, error)
}

var (
	_ prestartHook = (*identityHook)(nil)
	_ stopHook     = (*identityHook)(nil)
)

// identityHook gets the task's workload identities from the servers
// before every start and exposes those whose identity block asks so: in
// the environment (NOMAD_TOKEN, NOMAD_TOKEN_<name>) and in files of the
// secrets directory (nomad_token, nomad_<name>.jwt, or the block's
// filepath). The files are written mode 0644 inside the 0700 secrets
// directory that belongs to the task's user, as Nomad does: readable by
// the task, by no one else.
//
// An identity with a ttl written to a file is renewed: halfway to its
// expiry the hook has it signed again and rewrites the file, until the
// runner stops (Stop). Its environment variable keeps the token the task
// started with (change_mode is not supported yet).
type identityHook struct {
	signer IdentitySigner
	logger *slog.Logger

	mu     sync.Mutex // guards the fields below
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Name returns "identity".
func (*identityHook) Name() string { return "identity" }

// identityEnvName returns the environment variable of an identity.
func identityEnvName(name string) string {
	if name == structs.DefaultIdentityName {
		return "NOMAD_TOKEN"
	}
	return "NOMAD_TOKEN_" + name
}

// identityFile returns where an identity's file goes, relative to the
// task directory.
func identityFile(id *structs.TaskIdentity) string {
	if id.Filepath != "" {
		return filepath.Clean(id.Filepath)
	}
	if id.IdentityName() == structs.DefaultIdentityName {
		return filepath.Join(allocdir.SecretsDirName, "nomad_token")
	}
	return filepath.Join(allocdir.SecretsDirName, "nomad_"+id.IdentityName()+".jwt")
}

// Prestart signs the identities and exposes them. A task that exposes
// none still gets them signed only when it has identity blocks (the
// templates and the task API authenticate the task otherwise).
func (h *identityHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	ids := structs.TaskIdentities(req.Task)
	exposed := false
	for _, id := range ids {
		exposed = exposed || id.Env || id.File
	}
	if !exposed {
		return nil
	}
	if h.signer == nil {
		return fmt.Errorf("task %q asks for its workload identity, but this agent cannot have identities signed (no connection to the servers)", req.Task.Name)
	}
	signed, err := h.signer.SignIdentities(ctx, req.Alloc.ID, req.Task.Name)
	if err != nil {
		return fmt.Errorf("sign the workload identities of task %q: %w", req.Task.Name, err)
	}
	byName := make(map[string]string, len(signed))
	expiry := map[string]int64{}
	for _, s := range signed {
		byName[s.Name] = s.JWT
		expiry[s.Name] = s.Expiry
	}
	var renew []*structs.TaskIdentity
	for _, id := range ids {
		name := id.IdentityName()
		jwt, ok := byName[name]
		if !ok {
			if id.Env || id.File {
				return fmt.Errorf("the servers signed no identity %q for task %q", name, req.Task.Name)
			}
			continue
		}
		if id.Env {
			if resp.Env == nil {
				resp.Env = map[string]string{}
			}
			resp.Env[identityEnvName(name)] = jwt
		}
		if id.File {
			if err := writeTaskFile(req.TaskDir.Dir, identityFile(id), []byte(jwt)); err != nil {
				return fmt.Errorf("write identity %q of task %q: %w", name, req.Task.Name, err)
			}
			if expiry[name] != 0 {
				renew = append(renew, id)
			}
		}
	}
	if len(renew) > 0 {
		h.startRenewal(req.Alloc.ID, req.Task.Name, req.TaskDir.Dir, renew, expiry)
	}
	return nil
}

// startRenewal starts (once per run of the hook; a later start replaces
// it) the goroutine that renews the files of ids before they expire.
func (h *identityHook) startRenewal(allocID, task, taskDir string, ids []*structs.TaskIdentity, expiry map[string]int64) {
	h.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	h.cancel = cancel
	h.mu.Unlock()
	h.wg.Go(func() { h.renewLoop(ctx, allocID, task, taskDir, ids, maps.Clone(expiry)) })
}

// renewLoop sleeps until the earliest token is halfway to its expiry,
// has the task's identities signed again and rewrites the files of ids;
// it retries a failed renewal after renewRetry.
func (h *identityHook) renewLoop(ctx context.Context, allocID, task, taskDir string, ids []*structs.TaskIdentity, expiry map[string]int64) {
	wait := halfLife(ids, expiry, time.Now())
	for {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		signed, err := h.signer.SignIdentities(ctx, allocID, task)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.logf("could not renew the task's workload identities; retrying", "error", err)
			wait = renewRetry
			continue
		}
		for _, s := range signed {
			for _, id := range ids {
				if id.IdentityName() != s.Name {
					continue
				}
				if err := writeTaskFile(taskDir, identityFile(id), []byte(s.JWT)); err != nil {
					h.logf("could not write a renewed workload identity", "identity", s.Name, "error", err)
				}
				expiry[s.Name] = s.Expiry
			}
		}
		wait = halfLife(ids, expiry, time.Now())
	}
}

// halfLife returns how long until the first of ids is halfway from now to
// its expiry; at least a second.
func halfLife(ids []*structs.TaskIdentity, expiry map[string]int64, now time.Time) time.Duration {
	next := time.Duration(-1)
	for _, id := range ids {
		d := time.Unix(expiry[id.IdentityName()], 0).Sub(now) / 2
		if next < 0 || d < next {
			next = d
		}
	}
	return max(next, time.Second)
}

// renewRetry is how soon a failed renewal is tried again.
const renewRetry = 10 * time.Second

func (h *identityHook) logf(msg string, args ...any) {
	if h.logger != nil {
		h.logger.Warn(msg, args...)
	}
}

// Stop ends the renewal and waits for it.
func (h *identityHook) Stop() {
	h.mu.Lock()
	cancel := h.cancel
	h.cancel = nil
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	h.wg.Wait()
}

// writeTaskFile writes data to rel beneath the task directory through a
// temporary file renamed into place: a link the task planted there is
// replaced, never followed.
func writeTaskFile(taskDir, rel string, data []byte) error {
	if rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return fmt.Errorf("path %q is not inside the task directory", rel)
	}
	root, err := beneath.OpenRoot(taskDir)
	if err != nil {
		return err
	}
	defer root.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := filepath.Join(filepath.Dir(rel), "."+filepath.Base(rel)+".tmp-"+structs.GenerateUUID()[:8])
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = root.Remove(tmp)
	}
	return werr
}

// resumeIdentities serves the task API socket again and renews the
// identity files of a task the agent found running after a restart (the
// prestart hooks do not run for it). The files get fresh tokens; the
// environment keeps the ones the task started with.
func (tr *TaskRunner) resumeIdentities() {
	alloc, task := tr.allocAndTask()
	req := &PrestartRequest{Alloc: alloc, Task: task, AllocDir: tr.allocDir, TaskDir: tr.taskDir}
	for _, h := range []prestartHook{tr.identities, tr.taskAPI} {
		if err := h.Prestart(tr.shutdownCtx, req, &PrestartResponse{}); err != nil {
			tr.logger.Warn("could not resume a hook of the running task", "hook", h.Name(), "error", err)
		}
	}
}
