package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/drover-io/drover/api"
)

// execTerminal is the user's terminal for alloc exec: stdin and stdout
// when both are terminals.
type execTerminal struct {
	in, out *os.File
}

// terminal returns the user's terminal, nil when stdin or stdout is not
// one.
func (m *Meta) terminal() *execTerminal {
	in, ok1 := m.stdin.(*os.File)
	out, ok2 := m.stdout.(*os.File)
	if !ok1 || !ok2 || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil
	}
	return &execTerminal{in: in, out: out}
}

// makeRaw puts the terminal in raw mode (keys, Ctrl-C included, go to the
// command as typed) and returns what restores it.
func (t *execTerminal) makeRaw() (restore func(), err error) {
	st, err := term.MakeRaw(int(t.in.Fd()))
	if err != nil {
		return nil, err
	}
	return func() { _ = term.Restore(int(t.in.Fd()), st) }, nil
}

// size returns the terminal's size.
func (t *execTerminal) size() (api.TerminalSize, error) {
	w, h, err := term.GetSize(int(t.out.Fd()))
	if err != nil {
		return api.TerminalSize{}, err
	}
	return api.TerminalSize{Height: h, Width: w}, nil
}

// sizes sends the terminal's size after each change (SIGWINCH) until ctx
// ends or stop is called; stop waits for its goroutine.
func (t *execTerminal) sizes(ctx context.Context) (<-chan api.TerminalSize, func()) {
	out := make(chan api.TerminalSize)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-winch:
				s, err := t.size()
				if err != nil {
					continue
				}
				select {
				case out <- s:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, func() {
		signal.Stop(winch)
		cancel()
		wg.Wait()
	}
}

// interruptibleStdin returns r for alloc exec to read: a terminal or a
// pipe is duplicated and made non-blocking, so that closing the duplicate
// interrupts a pending read (a plain blocking read cannot be), and restore
// makes the descriptor blocking again (the flag is shared with whoever
// else holds it, such as the shell). Other readers are returned as they
// are, without Close, so that stdin itself stays open.
func interruptibleStdin(r io.Reader) (io.Reader, func(), error) {
	f, ok := r.(*os.File)
	if !ok {
		return struct{ io.Reader }{r}, func() {}, nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) == 0 {
		return struct{ io.Reader }{r}, func() {}, nil
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, nil, fmt.Errorf("duplicate stdin: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("make stdin non-blocking: %w", err)
	}
	dup := os.NewFile(uintptr(fd), "stdin")
	return dup, func() {
		dup.Close()
		_ = unix.SetNonblock(int(f.Fd()), false)
	}, nil
}
