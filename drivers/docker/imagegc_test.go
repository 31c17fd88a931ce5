package docker

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeRemover records removals; block, when set, holds each removal until
// it is closed.
type fakeRemover struct {
	block chan struct{}

	mu      sync.Mutex // guards the field below
	removed []string
}

func (f *fakeRemover) removeImage(ctx context.Context, ref string) error {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, ref)
	return nil
}

func (f *fakeRemover) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.removed)
}

const testDelay = 3 * time.Minute

func newTestGC(t *testing.T, r imageRemover, enabled bool) *imageGC {
	g := newImageGC(r, testDelay, enabled, slog.New(slog.DiscardHandler))
	t.Cleanup(g.stop)
	return g
}

// TestImageGC steps a fake clock (testing/synctest) through the image
// GC's timers.
func TestImageGC(t *testing.T) {
	ctx := context.Background()
	t.Run("removed after the delay once unused", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{}
			g := newTestGC(t, r, true)
			_ = g.use(ctx, "img:1", "t1")
			g.markManaged("img:1")
			g.release("img:1", "t1")
			time.Sleep(testDelay - time.Second)
			synctest.Wait()
			if r.count() != 0 {
				t.Fatal("removed before the delay")
			}
			time.Sleep(time.Second)
			synctest.Wait()
			if r.count() != 1 {
				t.Fatalf("removals = %d after the delay, want 1", r.count())
			}
		})
	})
	t.Run("a task taking it within the delay keeps it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{}
			g := newTestGC(t, r, true)
			_ = g.use(ctx, "img:1", "t1")
			g.markManaged("img:1")
			g.release("img:1", "t1")
			time.Sleep(testDelay / 2)
			_ = g.use(ctx, "img:1", "t2")
			time.Sleep(2 * testDelay)
			synctest.Wait()
			if r.count() != 0 {
				t.Fatal("an image in use was removed")
			}
			g.release("img:1", "t2")
			time.Sleep(testDelay)
			synctest.Wait()
			if r.count() != 1 {
				t.Fatalf("removals = %d, want 1 once unused again", r.count())
			}
		})
	})
	t.Run("kept while any task uses it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{}
			g := newTestGC(t, r, true)
			_ = g.use(ctx, "img:1", "t1")
			_ = g.use(ctx, "img:1", "t2")
			g.markManaged("img:1")
			g.release("img:1", "t1")
			time.Sleep(2 * testDelay)
			synctest.Wait()
			if r.count() != 0 {
				t.Fatal("removed while t2 uses it")
			}
		})
	})
	t.Run("never an image the driver did not fetch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{}
			g := newTestGC(t, r, true)
			_ = g.use(ctx, "img:1", "t1")
			g.release("img:1", "t1")
			time.Sleep(2 * testDelay)
			synctest.Wait()
			if r.count() != 0 {
				t.Fatal("removed an image that was there before")
			}
		})
	})
	t.Run("disabled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{}
			g := newTestGC(t, r, false)
			_ = g.use(ctx, "img:1", "t1")
			g.markManaged("img:1")
			g.release("img:1", "t1")
			time.Sleep(2 * testDelay)
			synctest.Wait()
			if r.count() != 0 {
				t.Fatal("removed with gc { image = false }")
			}
		})
	})
	t.Run("stop cancels pending removals", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{}
			g := newImageGC(r, testDelay, true, slog.New(slog.DiscardHandler))
			_ = g.use(ctx, "img:1", "t1")
			g.markManaged("img:1")
			g.release("img:1", "t1")
			g.stop()
			time.Sleep(2 * testDelay)
			synctest.Wait()
			if r.count() != 0 {
				t.Fatal("removed after stop")
			}
		})
	})
	t.Run("a task waits for a removal in flight", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{block: make(chan struct{})}
			g := newTestGC(t, r, true)
			_ = g.use(ctx, "img:1", "t1")
			g.markManaged("img:1")
			g.release("img:1", "t1")
			time.Sleep(testDelay)
			synctest.Wait() // the removal is in flight, blocked
			used := make(chan struct{})
			go func() {
				_ = g.use(ctx, "img:1", "t2")
				close(used)
			}()
			synctest.Wait()
			select {
			case <-used:
				t.Fatal("use returned while the image was being removed")
			default:
			}
			close(r.block)
			<-used
			if r.count() != 1 {
				t.Fatalf("removals = %d", r.count())
			}
			// t2 now holds it: no second removal.
			time.Sleep(2 * testDelay)
			synctest.Wait()
			if r.count() != 1 {
				t.Fatal("removed while t2 uses it")
			}
		})
	})
	t.Run("waiting for a removal ends with the caller's context", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &fakeRemover{block: make(chan struct{})}
			g := newTestGC(t, r, true)
			_ = g.use(ctx, "img:1", "t1")
			g.markManaged("img:1")
			g.release("img:1", "t1")
			time.Sleep(testDelay)
			synctest.Wait()
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			if err := g.use(cctx, "img:1", "t2"); err == nil {
				t.Fatal("use returned nil with its context done")
			}
			close(r.block)
		})
	})
}
