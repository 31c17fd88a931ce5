//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package state

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes the exclusive lock bbolt takes on an open state file,
// without waiting; it reports false when another process holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
