package shim

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// reap reaps the shim proc, a child of this process started with pidfd
// (-1 where the kernel gave none), once it exits, so that no zombie is
// left behind while this process lives. It returns a function that
// SIGKILLs the shim unless it was reaped already (never another process
// that got its pid).
//
// The shim is not waited for by a thread: a goroutine waits on the
// pidfd in the runtime's poller, so 1,000 shims cost 1,000 parked
// goroutines, not 1,000 threads blocked in waitid. The goroutine ends
// when the shim exits; if this process exits first, the shim is
// re-parented and reaped by its new parent. Without a pidfd (kernels
// before 5.3), os.Process.Wait reaps the shim from a thread of its own,
// and so does the goroutine where the poller does not take the pidfd.
func reap(proc *os.Process, pidfd int) (kill func()) {
	if pidfd >= 0 {
		if err := syscall.SetNonblock(pidfd, true); err == nil {
			f := os.NewFile(uintptr(pidfd), "shim pidfd")
			if rc, err := f.SyscallConn(); err == nil {
				// os.Process holds a pidfd of its own: drop it, this one
				// waits.
				_ = proc.Release()
				go func() {
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
	go func() { _, _ = proc.Wait() }()
	return func() { _ = proc.Signal(syscall.SIGKILL) }
}
