package shim

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// reaper tracks a shim this process started until it has reaped it: it is
// how a Handle from Start learns that its shim is gone without holding a
// connection (and a goroutine) per task waiting for the exit.
type reaper struct {
	done chan struct{} // closed once the shim is reaped

	mu sync.Mutex // guards the fields below
	// fns run, in the reaping goroutine, once the shim is reaped.
	fns  []func()
	gone bool
}

func newReaper() *reaper { return &reaper{done: make(chan struct{})} }

// reaped marks the shim gone and runs what waited for it.
func (r *reaper) reaped() {
	r.mu.Lock()
	r.gone = true
	fns := r.fns
	r.fns = nil
	r.mu.Unlock()
	close(r.done)
	for _, f := range fns {
		f()
	}
}

// afterGone runs f once the shim is reaped: at once (in the caller's
// goroutine) if it is already, else in the goroutine that reaps it.
func (r *reaper) afterGone(f func()) {
	r.mu.Lock()
	if !r.gone {
		r.fns = append(r.fns, f)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	f()
}

// reap reaps the shim proc, a child of this process started with pidfd
// (-1 where the kernel gave none), once it exits, so that no zombie is
// left behind while this process lives, and then tells r. It returns a
// function that SIGKILLs the shim unless it was reaped already (never
// another process that got its pid).
//
// The shim is not waited for by a thread: a goroutine waits on the
// pidfd in the runtime's poller, so 1,000 shims cost 1,000 parked
// goroutines, not 1,000 threads blocked in waitid; it is the only
// goroutine a running task costs in this process (Handle.Wait and
// WaitResult wait on r). The goroutine ends when the shim exits; if this
// process exits first, the shim is re-parented and reaped by its new
// parent. Without a pidfd (kernels before 5.3), os.Process.Wait reaps
// the shim from a thread of its own, and so does the goroutine where the
// poller does not take the pidfd.
func reap(proc *os.Process, pidfd int, r *reaper) (kill func()) {
	if pidfd >= 0 {
		if err := syscall.SetNonblock(pidfd, true); err == nil {
			f := os.NewFile(uintptr(pidfd), "shim pidfd")
			if rc, err := f.SyscallConn(); err == nil {
				// os.Process holds a pidfd of its own: drop it, this one
				// waits.
				_ = proc.Release()
				go func() {
					defer r.reaped()
					defer f.Close()
					err := rc.Read(func(fd uintptr) bool {
						var info unix.Siginfo
						err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG, nil)
						// Not exited yet: zero info and no error; wait for
						// the pidfd to be readable.
						return err != unix.EINTR && (err != nil || info.Signo != 0)
					})
					if err != nil {
						// The poller does not take this pidfd: wait from
						// this goroutine's thread.
						_ = rc.Control(func(fd uintptr) {
							_ = syscall.SetNonblock(int(fd), false)
							var info unix.Siginfo
							for unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED, nil) == unix.EINTR {
							}
						})
					}
				}()
				return func() {
					_ = rc.Control(func(fd uintptr) {
						_ = unix.PidfdSendSignal(int(fd), unix.SIGKILL, nil, 0)
					})
				}
			}
			f.Close()
		} else {
			syscall.Close(pidfd)
		}
	}
	go func() {
		defer r.reaped()
		_, _ = proc.Wait()
	}()
	return func() { _ = proc.Signal(syscall.SIGKILL) }
}

// watch tells r once the shim st describes exits, for a shim this process
// did not start (Attach, after an agent restart; its new parent reaps
// it): a goroutine waits in the runtime's poller on a pidfd of the shim,
// which turns readable when it exits. It reports false, and starts
// nothing, where it cannot: no pidfd_open (kernels before 5.3), or the
// shim is gone already.
func watch(st *State, r *reaper) bool {
	pidfd, err := unix.PidfdOpen(st.ShimPID, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	// The pid may have been reused between the caller's check and the
	// open: the pidfd must be the shim's.
	if !processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) {
		unix.Close(pidfd)
		return false
	}
	f := os.NewFile(uintptr(pidfd), "shim pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return false
	}
	go func() {
		defer r.reaped()
		defer f.Close()
		err := rc.Read(func(fd uintptr) bool {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(p, 0)
			return err != unix.EINTR && (err != nil || n > 0)
		})
		if err != nil {
			// The poller does not take this pidfd: wait from this
			// goroutine's thread.
			_ = rc.Control(func(fd uintptr) {
				p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				for {
					if _, err := unix.Poll(p, -1); err != unix.EINTR {
						return
					}
				}
			})
		}
	}()
	return true
}
