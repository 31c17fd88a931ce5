package docker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// lockedBuffer collects output written by the driver's goroutines.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // when not nil, signalled (without blocking) after each write
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	if l.wrote != nil {
		select {
		case l.wrote <- struct{}{}:
		default:
		}
	}
	return n, err
}

// await waits until the buffer holds s, waking on each write.
func (l *lockedBuffer) await(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(testwait.Bound)
	for !strings.Contains(l.String(), s) {
		select {
		case <-l.wrote:
		case <-timeout:
			t.Fatalf("output %q lacks %q after %s", l.String(), s, testwait.Bound)
		}
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestDriver_ExecTaskStreaming(t *testing.T) {
	h := newHarness(t, nil)
	cfg := h.config(shell("echo ready; exec sleep 1000"))
	h.start(cfg)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")

	cases := []struct {
		name           string
		cmd            []string
		tty            bool
		stdin          string
		stdout, stderr string
		code           int
	}{
		{name: "output and exit", cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 4"}, stdout: "out\n", stderr: "err\n", code: 4},
		{name: "stdin", cmd: []string{"cat"}, stdin: "one\ntwo\n", stdout: "one\ntwo\n"},
		{name: "tty", cmd: []string{"sh", "-c", "test -t 0 && echo term; exit 3"}, tty: true, stdout: "term\r\n", code: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			opts := &drivers.ExecOptions{Command: tc.cmd, TTY: tc.tty, Stdout: &stdout, Stderr: &stderr}
			if tc.stdin != "" {
				opts.Stdin = io.NopCloser(strings.NewReader(tc.stdin))
			}
			res, err := h.d.ExecTaskStreaming(context.Background(), cfg.ID, opts)
			if err != nil {
				t.Fatalf("ExecTaskStreaming: %v", err)
			}
			if stdout.String() != tc.stdout || stderr.String() != tc.stderr || res.ExitCode != tc.code {
				t.Fatalf("stdout %q stderr %q exit %d; want %q %q %d", stdout.String(), stderr.String(), res.ExitCode, tc.stdout, tc.stderr, tc.code)
			}
		})
	}

	// The initial size. Before API 1.42 Docker takes a size only once the
	// command has started, so the driver applies it just after: the
	// command waits until its terminal has a size (stty prints none for
	// 0x0),
	// after a line typed once it runs.
	pr, pw := io.Pipe()
	sized := &lockedBuffer{wrote: make(chan struct{}, 1)}
	sizeDone := make(chan error, 1)
	go func() {
		_, err := h.d.ExecTaskStreaming(context.Background(), cfg.ID, &drivers.ExecOptions{
			Command: []string{"sh", "-c", `echo started; read x; until s=$(stty size 2>/dev/null) && [ -n "$s" ]; do sleep 0.05; done; echo "$s"`}, TTY: true, Stdin: pr, Stdout: sized,
			InitialSize: drivers.TerminalSize{Height: 33, Width: 101},
		})
		sizeDone <- err
	}()
	sized.await(t, "started")
	_, _ = pw.Write([]byte("go\n"))
	if err := <-sizeDone; err != nil || !strings.HasSuffix(sized.String(), "33 101\r\n") {
		t.Fatalf("initial size: output %q, %v", sized.String(), err)
	}

	// A missing command is reported by Docker as exit 126 or 127 with
	// its message.
	var out lockedBuffer
	res, err := h.d.ExecTaskStreaming(context.Background(), cfg.ID, &drivers.ExecOptions{Command: []string{"/no/such/binary"}, Stdout: &out, Stderr: &out})
	if err == nil && res.ExitCode == 0 {
		t.Errorf("exec of a missing binary succeeded: %q", out.String())
	}

	// Cancelling kills the command (the daemon is local) and leaves the
	// task running.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw = io.Pipe()
	started := &notifyWriter{seen: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		_, err := h.d.ExecTaskStreaming(ctx, cfg.ID, &drivers.ExecOptions{Command: []string{"sh", "-c", "echo started; cat"}, Stdin: pr, Stdout: started})
		errc <- err
	}()
	<-started.seen
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled exec: %v, want context.Canceled", err)
	}
	pw.Close()
	st, err := h.d.InspectTask(context.Background(), cfg.ID)
	if err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("task after a cancelled exec: %+v, %v", st, err)
	}

	if _, err := h.d.ExecTaskStreaming(context.Background(), "nope", &drivers.ExecOptions{Command: []string{"true"}}); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

// notifyWriter closes seen on its first write.
type notifyWriter struct {
	once sync.Once
	seen chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.seen) })
	return len(p), nil
}

func TestDriver_ExecTaskStreamingExited(t *testing.T) {
	h := newHarness(t, nil)
	cfg := h.config(shell("exit 0"))
	h.start(cfg)
	h.wait(cfg.ID)
	_, err := h.d.ExecTaskStreaming(context.Background(), cfg.ID, &drivers.ExecOptions{Command: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("exec into an exited task: %v, want an error saying it exited", err)
	}
}
