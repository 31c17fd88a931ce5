package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// retryDelay is how long a watcher waits before retrying a failed call to
// the daemon (a daemon restart, for example).
const retryDelay = time.Second

// logDrainTimeout bounds how long the exit result waits for the log
// streamer to copy the container's last output.
const logDrainTimeout = 5 * time.Second

// task is one container the driver watches. Its two goroutines, the exit
// watcher and the log streamer, run until the container exits and its
// output is copied, or until cancel (DestroyTask, Shutdown).
type task struct {
	cfg          *drivers.TaskConfig
	containerID  string
	image        string
	imageManaged bool
	startedAt    time.Time

	cancel   context.CancelFunc
	wg       sync.WaitGroup // the goroutines
	done     chan struct{}  // closed once result is set
	logsDone chan struct{}  // closed when the log streamer returns

	mu          sync.Mutex // guards the fields below
	result      *drivers.ExitResult
	completedAt time.Time
	// stopSignalled is set once the driver sent a stop or kill signal, so
	// an exit code above 128 is read as death by signal.
	stopSignalled bool
}

// exitResult returns the result, or nil while the container runs.
func (t *task) exitResult() (*drivers.ExitResult, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result, t.completedAt
}

func (t *task) markStopSignalled() {
	t.mu.Lock()
	t.stopSignalled = true
	t.mu.Unlock()
}

// exited reports whether the exit result is known.
func (t *task) exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// run starts the task's goroutines; logsSince is where log copying starts.
func (t *task) run(ctx context.Context, c *client, logger *slog.Logger, logsSince logStart) {
	ctx, t.cancel = context.WithCancel(ctx)
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		defer close(t.logsDone)
		t.streamLogs(ctx, c, logger, logsSince)
	}()
	go func() {
		defer t.wg.Done()
		t.watchExit(ctx, c, logger)
	}()
}

// stop cancels the goroutines and waits for them.
func (t *task) stop() {
	if t.cancel != nil {
		t.cancel()
	}
	t.wg.Wait()
}

// watchExit waits for the container to stop, lets the log streamer finish,
// and records the exit result. It returns without a result when ctx ends.
func (t *task) watchExit(ctx context.Context, c *client, logger *slog.Logger) {
	var res *drivers.ExitResult
	for res == nil {
		code, err := c.waitContainer(ctx, t.containerID)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			res = &drivers.ExitResult{ExitCode: code}
		case isNotFound(err):
			res = &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("container %s disappeared: %w", shortID(t.containerID), err)}
		default:
			logger.Warn("waiting for container failed; retrying", "container_id", shortID(t.containerID), "error", err)
			if !sleepCtx(ctx, retryDelay) {
				return
			}
		}
	}
	completed := time.Now()
	if res.Err == nil {
		if info, err := c.inspectContainer(ctx, t.containerID); err == nil {
			res.OOMKilled = info.State.OOMKilled
			if at := parseDockerTime(info.State.FinishedAt); !at.IsZero() {
				completed = at
			}
		} else if ctx.Err() != nil {
			return
		}
	}
	// Let the streamer copy the last lines before the task is reported
	// dead, so that readers of the exit find all the output.
	select {
	case <-t.logsDone:
	case <-time.After(logDrainTimeout):
		logger.Warn("log copy still running after the container exited", "container_id", shortID(t.containerID))
	case <-ctx.Done():
		return
	}
	t.mu.Lock()
	if t.stopSignalled && res.ExitCode > 128 && res.ExitCode < 128+65 {
		res.Signal = res.ExitCode - 128
	}
	t.result, t.completedAt = res, completed
	t.mu.Unlock()
	close(t.done)
}

// stopSignal picks StopTask's signal: the given one, the task's
// kill_signal, then SIGTERM (as `docker stop`).
func stopSignal(signal, killSignal string) (syscall.Signal, error) {
	if signal == "" {
		signal = killSignal
	}
	if signal == "" {
		return syscall.SIGTERM, nil
	}
	return drivers.ParseSignal(signal)
}

// sleepCtx waits d and reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// shortID is a container ID's first 12 characters, as Docker prints it.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

var errStillRunning = errors.New("container still running; stop it first or destroy with force")
