package execstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/plugins/drivers"
)

// DrainGrace bounds how long output is still read once the command has
// exited: what it wrote is read at once, but a process it left running in
// the background may hold its stdout open forever.
const DrainGrace = time.Second

// eot is the terminal's end-of-file character (Ctrl-D): with a TTY, the
// end of the caller's stdin is typed as it.
const eot = 0x04

// Default terminal size when the caller gives none.
const (
	defaultRows = 24
	defaultCols = 80
)

// Process is a started command.
type Process interface {
	// Wait waits for the command to exit and reaps it.
	Wait() (*os.ProcessState, error)
	// Kill kills the command (and what it started, where it can).
	Kill() error
}

// Stdio is the stdio of one streaming exec: a pseudo-terminal with
// ExecOptions.TTY, else three pipes. The command gets Files as its fds 0,
// 1 and 2; the caller starts it and hands it to Run, which copies between
// the files and the ExecOptions until the command exits.
type Stdio struct {
	opts *drivers.ExecOptions
	// Our ends: the command's stdin, stdout and stderr. With a TTY, in
	// and out are the same terminal master and errOut is nil.
	in, out, errOut *os.File
	// The command's ends, closed by Run once it has started (or by Close).
	child [3]*os.File

	closeOnce sync.Once
}

// Open creates the pseudo-terminal or the pipes for opts. The caller
// must Run or Close the Stdio.
func Open(opts *drivers.ExecOptions) (*Stdio, error) {
	s := &Stdio{opts: opts}
	if opts.TTY {
		master, slave, err := openPTY()
		if err != nil {
			return nil, fmt.Errorf("allocate a terminal: %w", err)
		}
		s.in, s.out = master, master
		s.child = [3]*os.File{slave, slave, slave}
		size := opts.InitialSize
		if size == (drivers.TerminalSize{}) {
			size = drivers.TerminalSize{Height: defaultRows, Width: defaultCols}
		}
		if err := setSize(master, size); err != nil {
			s.Close()
			return nil, fmt.Errorf("set terminal size: %w", err)
		}
		return s, nil
	}
	var files [6]*os.File
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range files[:2*i] {
				f.Close()
			}
			return nil, fmt.Errorf("create pipes: %w", err)
		}
		files[2*i], files[2*i+1] = r, w
	}
	s.child = [3]*os.File{files[0], files[3], files[5]}
	s.in, s.out, s.errOut = files[1], files[2], files[4]
	return s, nil
}

// TTY reports whether the command runs on a terminal. Such a command must
// start a session and make fd 0 its controlling terminal
// (syscall.SysProcAttr Setsid, Setctty, Ctty 0).
func (s *Stdio) TTY() bool { return s.opts.TTY }

// Files returns the command's stdin, stdout and stderr.
func (s *Stdio) Files() (stdin, stdout, stderr *os.File) {
	return s.child[0], s.child[1], s.child[2]
}

// Close releases the files and closes the caller's stdin; Run does it
// when it returns.
func (s *Stdio) Close() {
	s.closeOnce.Do(func() {
		s.closeChild()
		for _, f := range []*os.File{s.in, s.out, s.errOut} {
			if f != nil {
				f.Close()
			}
		}
		if s.opts.Stdin != nil {
			s.opts.Stdin.Close()
		}
	})
}

func (s *Stdio) closeChild() {
	for i, f := range s.child {
		if f != nil && (i == 0 || f != s.child[i-1]) {
			f.Close()
		}
	}
}

// Run streams the started command p's stdio until it exits, killing it
// when ctx is done, and returns its exit. Output still in the pipes is
// read for up to DrainGrace after the exit. Every goroutine it starts has
// ended when it returns, and the Stdio is closed.
func (s *Stdio) Run(ctx context.Context, p Process) (*drivers.ExitResult, error) {
	s.closeChild()
	// Deferred in this order so that they run in the reverse one: the
	// stdin and resize goroutines end once stop and the streams are
	// closed, and only then are they waited for.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer s.Close()
	stop := make(chan struct{})
	defer close(stop)

	outErr := make(chan error, 2)
	copyOut := func(dst io.Writer, src *os.File) {
		defer wg.Done()
		outErr <- copyOutput(dst, src)
	}
	outputs := 1
	wg.Add(1)
	go copyOut(s.opts.Stdout, s.out)
	if s.errOut != nil {
		outputs++
		wg.Add(1)
		go copyOut(s.opts.Stderr, s.errOut)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.copyInput()
	}()
	if s.opts.TTY && s.opts.Resize != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.resizeLoop(stop)
		}()
	}

	type waited struct {
		ps  *os.ProcessState
		err error
	}
	waitCh := make(chan waited, 1)
	go func() {
		ps, err := p.Wait()
		waitCh <- waited{ps, err}
	}()
	var w waited
	var cancelled error
	select {
	case w = <-waitCh:
	case <-ctx.Done():
		cancelled = ctx.Err()
		_ = p.Kill()
		w = <-waitCh
	}
	// The command is gone: read what it left, then stop reading.
	deadline := time.Now().Add(DrainGrace)
	_ = s.out.SetReadDeadline(deadline)
	if s.errOut != nil {
		_ = s.errOut.SetReadDeadline(deadline)
	}
	var copyErr error
	for range outputs {
		if err := <-outErr; err != nil && copyErr == nil {
			copyErr = err
		}
	}
	if cancelled != nil {
		return nil, fmt.Errorf("exec: %w", cancelled)
	}
	if w.ps == nil {
		return nil, fmt.Errorf("exec: wait for the command: %w", w.err)
	}
	if copyErr != nil {
		return nil, fmt.Errorf("exec: write the command's output: %w", copyErr)
	}
	return ExitResult(w.ps), nil
}

// copyInput copies the caller's stdin to the command's until EOF, which
// closes the command's stdin (types Ctrl-D on a terminal). It ends when
// Close closes either side.
func (s *Stdio) copyInput() {
	if s.opts.Stdin == nil {
		if !s.opts.TTY {
			s.in.Close()
		}
		return
	}
	_, err := io.Copy(s.in, s.opts.Stdin)
	if err != nil {
		return // the command or the caller is gone
	}
	if s.opts.TTY {
		_, _ = s.in.Write([]byte{eot})
		return
	}
	s.in.Close()
}

// resizeLoop applies the caller's terminal sizes until stop is closed.
func (s *Stdio) resizeLoop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case size, ok := <-s.opts.Resize:
			if !ok {
				return
			}
			if size.Validate() != nil {
				continue
			}
			_ = setSize(s.out, size) // a closed terminal: the command is gone
		}
	}
}

// copyOutput copies src to dst (nil: discard) until src ends: EOF, a
// terminal whose other side closed (EIO), or the read deadline.
func copyOutput(dst io.Writer, src *os.File) error {
	if dst == nil {
		dst = io.Discard
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, syscall.EIO), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, os.ErrClosed):
			return nil
		default:
			return err
		}
	}
}

// ExitResult turns a wait status into an ExitResult; a command killed by
// a signal reports ExitCode 128+signal as a shell would.
func ExitResult(state *os.ProcessState) *drivers.ExitResult {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok {
		return &drivers.ExitResult{ExitCode: state.ExitCode()}
	}
	if ws.Signaled() {
		sig := int(ws.Signal())
		return &drivers.ExitResult{ExitCode: 128 + sig, Signal: sig}
	}
	return &drivers.ExitResult{ExitCode: ws.ExitStatus()}
}

// openPTY opens a new pseudo-terminal: the master (non-blocking, so that
// reads honour deadlines and Close) and its slave.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var n uint32
	err = control(master, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return fmt.Errorf("unlock: %w", err)
		}
		var err error
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		return err
	})
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// setSize sets the terminal's size (TIOCSWINSZ).
func setSize(f *os.File, size drivers.TerminalSize) error {
	return control(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(size.Height), Col: uint16(size.Width)})
	})
}

// control runs fn on f's descriptor without making it blocking (as Fd
// would).
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// DefaultTerm is the TERM a command on a terminal gets when the task's
// environment sets none.
const DefaultTerm = "xterm"

// Env returns env (KEY=value entries) for a command run with opts: with a
// TTY, TERM is added when env lacks it, so that full-screen programs work.
func Env(env []string, opts *drivers.ExecOptions) []string {
	if !opts.TTY {
		return env
	}
	for _, kv := range env {
		if len(kv) >= 5 && kv[:5] == "TERM=" {
			return env
		}
	}
	return append(env[:len(env):len(env)], "TERM="+DefaultTerm)
}
