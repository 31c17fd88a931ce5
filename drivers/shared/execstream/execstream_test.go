package execstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cmdProcess adapts an exec.Cmd to Process; the command runs in its own
// process group, killed as one.
type cmdProcess struct{ cmd *exec.Cmd }

func (p cmdProcess) Wait() (*os.ProcessState, error) {
	err := p.cmd.Wait()
	return p.cmd.ProcessState, err
}

func (p cmdProcess) Kill() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

// syncBuffer is a bytes.Buffer safe for the copying goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// run runs the shell script under s's stdio.
func run(t *testing.T, ctx context.Context, opts *drivers.ExecOptions, script string) (*drivers.ExitResult, error) {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Files()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if s.TTY() {
		cmd.SysProcAttr.Setctty = true
		cmd.SysProcAttr.Ctty = 0
	}
	if err := cmd.Start(); err != nil {
		s.Close()
		t.Fatalf("start: %v", err)
	}
	return s.Run(ctx, cmdProcess{cmd})
}

func TestRunPipes(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		stdin      string
		wantOut    string
		wantErr    string
		wantCode   int
		wantSignal int
	}{
		{name: "echo stdin", script: "cat", stdin: "hello\n", wantOut: "hello\n"},
		{name: "stderr and exit code", script: "echo out; echo err >&2; exit 3", wantOut: "out\n", wantErr: "err\n", wantCode: 3},
		{name: "no stdin reads EOF", script: "cat; echo done", wantOut: "done\n"},
		{name: "killed by a signal", script: "kill -TERM $$", wantCode: 128 + 15, wantSignal: 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			opts := &drivers.ExecOptions{Command: []string{"sh"}, Stdout: &stdout, Stderr: &stderr}
			if tt.stdin != "" {
				opts.Stdin = io.NopCloser(strings.NewReader(tt.stdin))
			}
			res, err := run(t, context.Background(), opts, tt.script)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != tt.wantCode || res.Signal != tt.wantSignal {
				t.Errorf("exit = %d signal %d, want %d signal %d", res.ExitCode, res.Signal, tt.wantCode, tt.wantSignal)
			}
			if got := stdout.String(); got != tt.wantOut {
				t.Errorf("stdout = %q, want %q", got, tt.wantOut)
			}
			if got := stderr.String(); got != tt.wantErr {
				t.Errorf("stderr = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// A stdin that the caller never closes (an interactive client that sent
// nothing) does not hold up the end: Run closes it.
func TestRunClosesBlockedStdin(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var stdout syncBuffer
	res, err := run(t, context.Background(), &drivers.ExecOptions{Command: []string{"sh"}, Stdin: pr, Stdout: &stdout}, "echo hi")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 0 || stdout.String() != "hi\n" {
		t.Fatalf("exit %d, stdout %q", res.ExitCode, stdout.String())
	}
	if _, err := pw.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("write to the caller's stdin after Run: %v, want it closed", err)
	}
}

func TestRunTTY(t *testing.T) {
	resize := make(chan drivers.TerminalSize) // unbuffered: a send returns once the loop has it
	pr, pw := io.Pipe()
	stdout := &notifyBuffer{wrote: make(chan struct{}, 1)}
	opts := &drivers.ExecOptions{
		Command: []string{"sh"}, TTY: true, Stdin: pr, Stdout: stdout,
		InitialSize: drivers.TerminalSize{Height: 30, Width: 100}, Resize: resize,
	}
	// The script prints the size it starts with and waits for a line;
	// meanwhile the size changes (an invalid size first, which is
	// skipped); then it prints the size again.
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pw.Close()
		for !strings.Contains(stdout.String(), "30 100") {
			<-stdout.wrote
		}
		resize <- drivers.TerminalSize{Height: 0, Width: 10}
		resize <- drivers.TerminalSize{Height: 40, Width: 120}
		// The loop handles sizes in order: once it has taken this one,
		// the previous one has been applied.
		resize <- drivers.TerminalSize{Height: 40, Width: 120}
		_, _ = pw.Write([]byte("go\n"))
	}()
	res, err := run(t, context.Background(), opts, `test -t 0 && echo tty; stty size; read line; stty size; exit 5`)
	<-done
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 5 {
		t.Errorf("exit = %d, want 5", res.ExitCode)
	}
	out := strings.ReplaceAll(stdout.String(), "\r\n", "\n")
	want := "tty\n30 100\ngo\n40 120\n"
	if out != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

// notifyBuffer is a syncBuffer that signals each write on wrote.
type notifyBuffer struct {
	syncBuffer
	wrote chan struct{}
}

func (b *notifyBuffer) Write(p []byte) (int, error) {
	n, err := b.syncBuffer.Write(p)
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func TestRunCancelKills(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout syncBuffer
	s, err := Open(&drivers.ExecOptions{Command: []string{"sh"}, Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "echo started; exec sleep 1000")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Files()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = s.Run(ctx, cmdProcess{cmd})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("command ended with %v, want killed", cmd.ProcessState)
	}
}

// A command that leaves a background process holding its stdout ends the
// exec anyway, after DrainGrace.
func TestRunBackgroundHolder(t *testing.T) {
	var stdout syncBuffer
	res, err := run(t, context.Background(), &drivers.ExecOptions{Command: []string{"sh"}, Stdout: &stdout},
		"sleep 30 & echo parent; exit 2")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 2 || stdout.String() != "parent\n" {
		t.Fatalf("exit %d, stdout %q", res.ExitCode, stdout.String())
	}
}

func TestExecOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts *drivers.ExecOptions
		ok   bool
	}{
		{"nil", nil, false},
		{"no command", &drivers.ExecOptions{}, false},
		{"empty program", &drivers.ExecOptions{Command: []string{""}}, false},
		{"ok", &drivers.ExecOptions{Command: []string{"sh"}}, true},
		{"bad size", &drivers.ExecOptions{Command: []string{"sh"}, TTY: true, InitialSize: drivers.TerminalSize{Height: -1, Width: 3}}, false},
		{"too wide", &drivers.ExecOptions{Command: []string{"sh"}, TTY: true, InitialSize: drivers.TerminalSize{Height: 1, Width: 1 << 16}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.opts.Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
