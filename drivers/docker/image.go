package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// imageResult says what ensureImage did.
type imageResult struct {
	// ref is the image reference the container is created from.
	ref string
	// managed: the driver pulled or loaded it, so image GC may remove it
	// once no task uses it. An image that was already there is never
	// removed.
	managed bool
}

// ensureImage makes the task's image present, as Nomad's driver does: a
// load tarball is loaded; an image whose tag is latest (or missing), or
// any image with force_pull, is pulled; another is pulled only when
// missing. When a pull of a latest image fails and the image is present,
// the present one is used (logged); with force_pull the failure is the
// task's.
func (d *Driver) ensureImage(ctx context.Context, cfg *drivers.TaskConfig, conf *TaskConfig) (imageResult, error) {
	ref := normalizeImage(conf.Image)
	if conf.Load != "" {
		if err := d.loadTarball(ctx, cfg, conf.Load); err != nil {
			return imageResult{}, fmt.Errorf("load %q: %w", conf.Load, err)
		}
		ok, err := d.client.imageExists(ctx, ref)
		if err != nil {
			return imageResult{}, fmt.Errorf("look up image %q: %w", ref, err)
		}
		if !ok {
			return imageResult{}, fmt.Errorf("load %q: the tarball holds no image %q: set image to one of its tags", conf.Load, ref)
		}
		return imageResult{ref: ref, managed: true}, nil
	}
	_, tag := splitImageRef(ref)
	if !conf.ForcePull && tag != "latest" {
		ok, err := d.client.imageExists(ctx, ref)
		if err != nil {
			return imageResult{}, fmt.Errorf("look up image %q: %w", ref, err)
		}
		if ok {
			return imageResult{ref: ref}, nil
		}
		if err := d.pull(ctx, cfg, conf, ref); err != nil {
			return imageResult{}, drivers.NewRecoverableError(fmt.Errorf("image %q not found locally and could not be pulled: %w", ref, err), true)
		}
		return imageResult{ref: ref, managed: true}, nil
	}
	err := d.pull(ctx, cfg, conf, ref)
	if err == nil {
		return imageResult{ref: ref, managed: true}, nil
	}
	if !conf.ForcePull && ctx.Err() == nil {
		if ok, ierr := d.client.imageExists(ctx, ref); ierr == nil && ok {
			d.taskLogger(cfg).Warn("pulling the image failed; using the local copy", "image", ref, "error", err)
			return imageResult{ref: ref}, nil
		}
		return imageResult{}, drivers.NewRecoverableError(fmt.Errorf("image %q not found locally and could not be pulled: %w", ref, err), true)
	}
	return imageResult{}, drivers.NewRecoverableError(fmt.Errorf("image %q: force_pull: %w", ref, err), true)
}

// pull pulls ref with the credentials the task's and the plugin's auth
// settings give, bounded by the task's image_pull_timeout and the
// plugin's pull_activity_timeout.
func (d *Driver) pull(ctx context.Context, cfg *drivers.TaskConfig, conf *TaskConfig, ref string) error {
	auth, err := d.auth.resolve(ctx, ref, conf.Auth)
	if err != nil {
		if !conf.AuthSoftFail {
			return fmt.Errorf("find registry credentials: %w (set auth_soft_fail = true to pull without them)", err)
		}
		d.taskLogger(cfg).Warn("cannot find registry credentials; pulling without them (auth_soft_fail)", "image", ref, "error", err)
		auth = nil
	}
	timeout := conf.pullTimeout(d.config)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := d.client.pullImage(ctx, ref, auth)
	if err == nil {
		err = watchProgress(body, d.config.pullActivityTimeout())
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, errNoProgress) {
		return fmt.Errorf("not done after image_pull_timeout (%s): %w", timeout, ctx.Err())
	}
	return err
}

// errNoProgress is a pull the daemon stopped reporting progress on.
var errNoProgress = errors.New("no progress from the Docker daemon")

// watchProgress reads a pull's progress stream to its end and closes it;
// when no message comes for activity, it closes the stream and returns
// errNoProgress (pull_activity_timeout).
func watchProgress(body io.ReadCloser, activity time.Duration) error {
	var stalled atomic.Bool
	var once sync.Once
	fired := make(chan struct{})
	timer := time.AfterFunc(activity, func() {
		stalled.Store(true)
		body.Close()
		once.Do(func() { close(fired) })
	})
	err := readProgress(body, func(*jsonMessage) { timer.Reset(activity) })
	if !timer.Stop() {
		<-fired // it fired: let it finish
	}
	body.Close()
	if stalled.Load() {
		return fmt.Errorf("%w for %s (the plugin's pull_activity_timeout)", errNoProgress, activity)
	}
	return err
}

// loadTarball loads the image tarball file, a path in the task's local
// directory (as Nomad's load), which must stay inside the allocation.
func (d *Driver) loadTarball(ctx context.Context, cfg *drivers.TaskConfig, file string) error {
	local := cfg.TaskDir.LocalDir
	if local == "" {
		return errors.New("the task has no local directory")
	}
	p, err := hostPaths{taskDir: local, allocDir: cfg.AllocDir}.resolve(filepath.Join(local, file))
	if err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	body, err := d.client.loadImage(ctx, f)
	if err != nil {
		return err
	}
	defer body.Close()
	return readProgress(body, nil)
}
