package rawexec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

// lockedBuffer collects output written by the driver's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestDriver_ExecTaskStreaming(t *testing.T) {
	cases := []struct {
		name     string
		cmd      []string
		tty      bool
		stdin    string
		stdout   string
		stderr   string
		exitCode int
		wantErr  string
	}{
		{name: "output and exit", cmd: []string{"/bin/sh", "-c", "echo hi; echo oops >&2; exit 2"}, stdout: "hi\n", stderr: "oops\n", exitCode: 2},
		{name: "stdin", cmd: []string{"cat"}, stdin: "one\ntwo\n", stdout: "one\ntwo\n"},
		{name: "task env and dir", cmd: []string{"/bin/sh", "-c", `echo "$NOMAD_TASK_NAME $(basename "$(pwd)")"`}, stdout: "web web\n"},
		{name: "tty", cmd: []string{"/bin/sh", "-c", "test -t 0 && test -t 1 && echo term; exit 4"}, tty: true, stdout: "term\r\n", exitCode: 4},
		{name: "not found", cmd: []string{"no-such-command-drover"}, wantErr: "no-such-command-drover"},
		{name: "empty", cmd: nil, wantErr: "no command"},
	}
	h := newHarness(t)
	h.start(h.config("t1", "sleep", "30"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			opts := &drivers.ExecOptions{Command: tc.cmd, TTY: tc.tty, Stdout: &stdout, Stderr: &stderr}
			if tc.stdin != "" {
				opts.Stdin = io.NopCloser(strings.NewReader(tc.stdin))
			}
			res, err := h.d.ExecTaskStreaming(context.Background(), "t1", opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tc.stdout || stderr.String() != tc.stderr || res.ExitCode != tc.exitCode {
				t.Fatalf("got stdout %q stderr %q exit %d, want %q %q %d", stdout.String(), stderr.String(), res.ExitCode, tc.stdout, tc.stderr, tc.exitCode)
			}
		})
	}
}

func TestDriver_ExecTaskStreamingErrors(t *testing.T) {
	h := newHarness(t)
	_, err := h.d.ExecTaskStreaming(context.Background(), "nope", &drivers.ExecOptions{Command: []string{"true"}})
	if !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("unknown task: err = %v, want ErrTaskNotFound", err)
	}

	h.start(h.config("done", "true"))
	h.wait("done")
	_, err = h.d.ExecTaskStreaming(context.Background(), "done", &drivers.ExecOptions{Command: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("exited task: err = %v, want one saying it exited", err)
	}
}

func TestDriver_ExecTaskStreamingUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running as another user needs root")
	}
	h := newHarness(t)
	cfg := h.config("t1", "sleep", "30")
	cfg.User = "nobody"
	cfg.TaskDir.Dir = "/" // nobody cannot enter the test's private temp dir
	h.start(cfg)
	var stdout lockedBuffer
	res, err := h.d.ExecTaskStreaming(context.Background(), "t1", &drivers.ExecOptions{Command: []string{"id", "-un"}, Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || strings.TrimSpace(stdout.String()) != "nobody" {
		t.Fatalf("exit %d, user %q, want nobody", res.ExitCode, stdout.String())
	}
}
