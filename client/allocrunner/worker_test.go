package allocrunner

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

func TestPokeWorker(t *testing.T) {
	t.Run("pokes before start run once started", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var runs atomic.Int32
			w := newPokeWorker(func() { runs.Add(1) })
			w.poke()
			w.poke()
			synctest.Wait()
			if n := runs.Load(); n != 0 {
				t.Fatalf("%d runs before start", n)
			}
			w.start()
			synctest.Wait()
			if n := runs.Load(); n != 1 {
				t.Fatalf("%d runs after start, want 1 (pokes coalesced)", n)
			}
			w.stop()
		})
	})
	t.Run("pokes during a run coalesce into one more", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			var runs atomic.Int32
			w := newPokeWorker(func() {
				if runs.Add(1) == 1 {
					<-release
				}
			})
			w.start()
			w.poke()
			synctest.Wait() // the first run blocks
			for range 5 {
				w.poke()
			}
			close(release)
			synctest.Wait()
			if n := runs.Load(); n != 2 {
				t.Fatalf("%d runs, want 2", n)
			}
			w.stop()
		})
	})
	t.Run("no goroutine while idle, none after stop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var runs atomic.Int32
			w := newPokeWorker(func() { runs.Add(1) })
			w.start()
			w.poke()
			synctest.Wait()
			w.stop()
			w.poke()
			synctest.Wait()
			if n := runs.Load(); n != 1 {
				t.Fatalf("%d runs, want 1 (none after stop)", n)
			}
		})
	})
	t.Run("stop waits for the run in progress", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			var done atomic.Bool
			w := newPokeWorker(func() {
				<-release
				done.Store(true)
			})
			w.start()
			w.poke()
			synctest.Wait()
			var wg sync.WaitGroup
			wg.Go(func() { w.stop() })
			synctest.Wait()
			close(release)
			wg.Wait()
			if !done.Load() {
				t.Fatal("stop returned before the run ended")
			}
		})
	})
}
