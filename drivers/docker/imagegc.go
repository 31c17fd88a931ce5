package docker

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// imageRemover removes an image reference; the daemon refuses while a
// container uses it.
type imageRemover interface {
	removeImage(ctx context.Context, ref string) error
}

// imageGC removes the images the driver pulled or loaded once no task has
// used them for a delay (the plugin's gc { image, image_delay }). A task
// that asks for an image while its removal is pending cancels it; one
// that asks while it is being removed waits for the removal to end (and
// then pulls it again). Images the driver did not fetch are never
// removed. Timers are the only clock: tests run it under testing/synctest.
type imageGC struct {
	remover imageRemover
	delay   time.Duration
	enabled bool
	logger  *slog.Logger
	// onRemoved, when set (by tests, before use), is called after each
	// removal with its outcome.
	onRemoved func(ref string, err error)

	ctx    context.Context // cancelled by stop: ends a removal in flight
	cancel context.CancelFunc
	wg     sync.WaitGroup // removals in flight

	mu      sync.Mutex // guards the fields below
	images  map[string]*gcImage
	stopped bool
}

// gcImage is what the GC knows of one image reference.
type gcImage struct {
	users   map[string]bool // IDs of the tasks using it
	managed bool            // pulled or loaded by the driver
	// timer is the pending removal; nil: none. gen numbers the timers,
	// so that a timer that fired as it was replaced does nothing.
	timer *time.Timer
	gen   uint64
	// removing is closed when the removal in flight ends; nil: none.
	removing chan struct{}
}

func newImageGC(remover imageRemover, delay time.Duration, enabled bool, logger *slog.Logger) *imageGC {
	ctx, cancel := context.WithCancel(context.Background())
	return &imageGC{remover: remover, delay: delay, enabled: enabled, logger: logger,
		ctx: ctx, cancel: cancel, images: map[string]*gcImage{}}
}

// use records that task taskID uses ref, cancelling a pending removal and
// waiting (bounded by ctx) for one in flight.
func (g *imageGC) use(ctx context.Context, ref, taskID string) error {
	for {
		g.mu.Lock()
		im := g.images[ref]
		if im == nil {
			im = &gcImage{users: map[string]bool{}}
			g.images[ref] = im
		}
		if ch := im.removing; ch != nil {
			g.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if im.timer != nil {
			im.timer.Stop()
			im.timer = nil
		}
		im.users[taskID] = true
		g.mu.Unlock()
		return nil
	}
}

// markManaged records that the driver pulled or loaded ref.
func (g *imageGC) markManaged(ref string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if im := g.images[ref]; im != nil {
		im.managed = true
	}
}

// release records that task taskID no longer uses ref. When no task does
// and the driver fetched it, its removal is scheduled after the delay.
func (g *imageGC) release(ref, taskID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	im := g.images[ref]
	if im == nil {
		return
	}
	delete(im.users, taskID)
	if len(im.users) > 0 || im.removing != nil || im.timer != nil {
		return
	}
	if !g.enabled || !im.managed || g.stopped {
		delete(g.images, ref)
		return
	}
	im.gen++
	gen := im.gen
	im.timer = time.AfterFunc(g.delay, func() { g.remove(ref, gen) })
}

// remove is timer gen's removal of ref, unless a task took the image
// again.
func (g *imageGC) remove(ref string, gen uint64) {
	g.mu.Lock()
	im := g.images[ref]
	if g.stopped || im == nil || im.timer == nil || im.gen != gen || len(im.users) > 0 {
		g.mu.Unlock()
		return
	}
	im.timer = nil
	done := make(chan struct{})
	im.removing = done
	g.wg.Add(1)
	g.mu.Unlock()
	defer g.wg.Done()

	err := g.remover.removeImage(g.ctx, ref)
	if err != nil {
		g.logger.Warn("removing an unused image failed; it stays", "image", ref, "error", err)
	} else {
		g.logger.Info("removed an unused image", "image", ref, "unused_for", g.delay)
	}
	if g.onRemoved != nil {
		g.onRemoved(ref, err)
	}
	g.mu.Lock()
	im.removing = nil
	if len(im.users) == 0 && im.timer == nil && g.images[ref] == im {
		delete(g.images, ref)
	}
	close(done)
	g.mu.Unlock()
}

// stop cancels pending removals, ends the one in flight and waits for it.
func (g *imageGC) stop() {
	g.mu.Lock()
	g.stopped = true
	for _, im := range g.images {
		if im.timer != nil {
			im.timer.Stop()
			im.timer = nil
		}
	}
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
}
