package taskrunner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/drover-io/drover/client/artifact"
	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// ArtifactFetcher fetches one artifact into a task's directory
// (*artifact.Getter).
type ArtifactFetcher interface {
	Fetch(ctx context.Context, req *artifact.Request) error
}

var _ prestartHook = (*artifactHook)(nil)

// artifactHook fetches the task's artifacts before its first start. Each
// artifact fetched is recorded in the hook's state (its index and the
// hash of its definition), so that a retry after a failure fetches only
// the others; once all are fetched the hook is Done, and a restart of the
// task (or of the agent) fetches nothing again.
//
// A failure is the task event "Failed Artifact Download". One that may
// pass (the network, the server, a checksum) is a recoverable error: the
// task runner applies the restart policy, as to a failed start; one that
// never will (an archive or a destination leaving the task's directory)
// fails the task.
type artifactHook struct {
	fetcher ArtifactFetcher
	events  eventEmitter
	node    *structs.Node
	// fetched is what this runner fetched (index -> hash), kept across a
	// failed run of the hooks, whose state is not saved. Only the run
	// loop touches it.
	fetched map[string]string
}

// Name returns "artifacts".
func (*artifactHook) Name() string { return "artifacts" }

// Prestart fetches the artifacts not fetched yet.
func (h *artifactHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	task := req.Task
	if len(task.Artifacts) == 0 {
		return nil // nothing to do, nor to record
	}
	if h.fetched == nil {
		h.fetched = map[string]string{}
	}
	done := maps.Clone(req.PreviousState)
	if done == nil {
		done = map[string]string{}
	}
	maps.Copy(done, h.fetched)
	taskDir, err := filepath.Rel(req.AllocDir.AllocDir, req.TaskDir.Dir)
	if err != nil {
		return fmt.Errorf("task directory %s is not in the allocation directory: %w", req.TaskDir.Dir, err)
	}
	var owner *artifact.Owner
	announced := false
	for i, a := range task.Artifacts {
		key, hash := strconv.Itoa(i), a.Hash()
		if done[key] == hash {
			continue
		}
		if !announced {
			h.events.EmitEvent(structs.NewTaskEvent(structs.TaskDownloadingArtifacts))
			announced = true
		}
		if a.Chown && task.User != "" && owner == nil {
			if owner, err = lookupOwner(task.User); err != nil {
				return h.failed(err, false)
			}
		}
		err := h.fetcher.Fetch(ctx, &artifact.Request{
			Artifact: interpolateArtifact(a, req.Env, h.node, req.Alloc),
			AllocDir: req.AllocDir.AllocDir,
			TaskDir:  taskDir,
			Owner:    owner,
		})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return h.failed(fmt.Errorf("artifact %d: %w", i+1, err), artifact.IsRecoverable(err))
		}
		done[key] = hash
		h.fetched[key] = hash
	}
	resp.State = done
	resp.Done = true
	return nil
}

// artifactFetcher returns f, or a getter with the default configuration.
func artifactFetcher(f ArtifactFetcher, logger *slog.Logger) ArtifactFetcher {
	if f != nil {
		return f
	}
	return artifact.New(artifact.DefaultConfig(), logger)
}

// failed records the event of a failed fetch and returns the error, which
// the task runner treats as a failed start (recoverable) or a failed setup.
func (h *artifactHook) failed(err error, recoverable bool) error {
	h.events.EmitEvent(structs.NewTaskEvent(structs.TaskArtifactDownloadFailed).SetDownloadError(err))
	return drivers.NewRecoverableError(err, recoverable)
}

// interpolateArtifact returns a copy of a with the ${...} references of
// its source, destination, options and headers resolved against the
// task's environment and the node, as Nomad's client does.
func interpolateArtifact(a *structs.TaskArtifact, env map[string]string, node *structs.Node, alloc *structs.Allocation) *structs.TaskArtifact {
	in := &taskenv.Input{}
	if alloc != nil && alloc.Job != nil {
		in.Region = alloc.Job.Region
	}
	setNode(in, node)
	attrs, meta := taskenv.NodeAttrs(in), in.NodeMeta
	expand := func(s string) string { return taskenv.Interpolate(s, env, attrs, meta) }
	c := a.Copy()
	c.GetterSource = expand(c.GetterSource)
	c.RelativeDest = expand(c.RelativeDest)
	for k, v := range c.GetterOptions {
		c.GetterOptions[k] = expand(v)
	}
	for k, v := range c.GetterHeaders {
		c.GetterHeaders[k] = expand(v)
	}
	return c
}

// lookupOwner returns the IDs of the task's user, for an artifact's chown.
func lookupOwner(name string) (*artifact.Owner, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("artifact chown: user %q: %w", name, err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("artifact chown: user %q has uid %q", name, u.Uid)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("artifact chown: user %q has gid %q", name, u.Gid)
	}
	return &artifact.Owner{UID: uid, GID: gid}, nil
}
