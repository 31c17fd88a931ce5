package isolation

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// numSignals is the number of signals Linux has (1 to 64).
const numSignals = 64

// sigIgn is SIG_IGN, the handler value of an ignored signal.
const sigIgn = 1

// DefaultSignals gives the calling thread an empty signal mask and every
// signal of the process that is ignored (SIG_IGN) back its default action,
// so that a program started from this thread — by fork and exec, or by
// execve — begins with default signal dispositions and an empty mask, as
// every task must, whatever this process inherited (an agent started
// under nohup has SIGHUP ignored, and a blocked signal stays blocked
// across fork and execve).
//
// Call it on a locked thread (runtime.LockOSThread) and start the program
// from that thread: the mask is per thread, and Go's fork gives the child
// the mask of the thread that forks. Dispositions are per process: a
// signal that was ignored is no longer ignored by this process either (a
// Go program then takes its default action, e.g. exits on SIGHUP). Signals
// the Go runtime handles need nothing: fork+exec and execve reset a
// handled signal to its default.
func DefaultSignals() error {
	var empty unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, nil); err != nil {
		return fmt.Errorf("clear signal mask: %w", err)
	}
	for sig := 1; sig <= numSignals; sig++ {
		if sig == int(syscall.SIGKILL) || sig == int(syscall.SIGSTOP) {
			continue
		}
		ignored, err := signalIgnored(sig)
		if err != nil {
			return err
		}
		if !ignored {
			continue
		}
		if err := setSignalDefault(sig); err != nil {
			return err
		}
	}
	return nil
}

// kernelSigaction is large enough for the kernel's struct sigaction on
// every architecture. Its first word is the handler; an all-zero value is
// SIG_DFL with no flags and an empty mask everywhere.
type kernelSigaction [4]uint64

// sigsetSize is the size of the kernel's sigset_t that rt_sigaction takes.
const sigsetSize = 8

// signalIgnored reports whether sig's disposition is SIG_IGN.
func signalIgnored(sig int) (bool, error) {
	var old kernelSigaction
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&old)), sigsetSize, 0, 0)
	if errno != 0 {
		return false, fmt.Errorf("read disposition of signal %d: %w", sig, errno)
	}
	return old[0] == sigIgn, nil
}

// setSignalDefault sets sig's disposition to SIG_DFL.
func setSignalDefault(sig int) error {
	var act kernelSigaction // SIG_DFL
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, sigsetSize, 0, 0)
	if errno != 0 {
		return fmt.Errorf("reset signal %d to its default action: %w", sig, errno)
	}
	return nil
}
