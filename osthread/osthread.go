// Package osthread runs code that changes its OS thread's state (joins a
// namespace, unshares one) on a thread of its own that is never given back
// to the Go scheduler.
//
// A goroutine that locks its thread and ends without unlocking it ends the
// thread with it, so nothing it changed leaks to other goroutines. The
// process's main thread is the exception: Go parks it for good instead of
// ending it, and whatever the goroutine changed (a task's network
// namespace, say) stays pinned and shows as the process's own in
// /proc/self/ns. Throwaway never runs f on the main thread.
package osthread

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// Throwaway runs f on an OS thread locked to it that exits once f returns,
// and waits for f. The thread is never the process's main thread. f must
// not start goroutines that rely on the thread's changed state: they run
// on other threads.
func Throwaway(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// The main thread: keep it (locked, so the goroutine below
			// runs on another thread) and give it back unchanged.
			Throwaway(f)
			runtime.UnlockOSThread()
			close(done)
			return
		}
		defer close(done) // the thread, still locked, exits after this
		f()
	}()
	<-done
}
