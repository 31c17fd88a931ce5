package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/drover-io/drover/drivers/shared/testwait"
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

func TestExecTaskStreaming(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`echo ready > /local/ready; exec sleep 1000`)
	th := h.start(cfg)
	testwait.Exists(t, "task ready", cfg.TaskDir.LocalDir+"/ready")
	taskCgroup, err := os.ReadFile("/proc/" + strconv.Itoa(handleState(t, th).Isolation.Pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	// The agent may run with SIGHUP ignored (nohup does that): the
	// command must not inherit it.
	signal.Ignore(syscall.SIGHUP)
	defer signal.Reset(syscall.SIGHUP)

	cases := []struct {
		name     string
		cmd      []string
		tty      bool
		stdin    string
		wantOut  string
		wantErr  string
		exitCode int
	}{
		{
			name:    "inside the task",
			cmd:     []string{"sh", "-c", `cat /local/ready; id -u; cat /proc/1/comm; echo $NOMAD_TASK_DIR; cat; exit 3`},
			stdin:   "from stdin\n",
			wantOut: "ready\n65534\nsleep\n/local\nfrom stdin\n", exitCode: 3,
		},
		{name: "task's cgroup", cmd: []string{"cat", "/proc/self/cgroup"}, wantOut: string(taskCgroup)},
		{name: "default signals", cmd: []string{"sh", "-c", "grep -E '^Sig(Ign|Blk)' /proc/self/status"},
			wantOut: "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"},
		{name: "tty", cmd: []string{"sh", "-c", `test -t 0 && echo "term $TERM"; exit 4`}, tty: true, wantOut: "term xterm\r\n", exitCode: 4},
		{name: "missing command", cmd: []string{"no-such-command"}, wantErr: "not found"},
		{name: "empty command", cmd: nil, wantErr: "no command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout lockedBuffer
			opts := &drivers.ExecOptions{Command: tc.cmd, TTY: tc.tty, Stdout: &stdout, Stderr: &stdout}
			if tc.stdin != "" {
				opts.Stdin = io.NopCloser(strings.NewReader(tc.stdin))
			}
			res, err := h.d.ExecTaskStreaming(context.Background(), cfg.ID, opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tc.wantOut || res.ExitCode != tc.exitCode {
				t.Fatalf("output %q exit %d; want %q, %d", stdout.String(), res.ExitCode, tc.wantOut, tc.exitCode)
			}
		})
	}

	// Cancelling kills the command, not the task.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stdout := &lockedBuffer{}
	errc := make(chan error, 1)
	go func() {
		_, err := h.d.ExecTaskStreaming(ctx, cfg.ID, &drivers.ExecOptions{Command: []string{"sh", "-c", "read x; echo $x; exec sleep 1000"}, Stdin: pr, Stdout: stdout})
		errc <- err
	}()
	_, _ = pw.Write([]byte("started\n"))
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled exec: err = %v, want context.Canceled", err)
	}
	st, err := h.d.InspectTask(context.Background(), cfg.ID)
	if err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("task after a cancelled exec: %+v, %v; want it running", st, err)
	}

	if _, err := h.d.ExecTaskStreaming(context.Background(), "nope", &drivers.ExecOptions{Command: []string{"true"}}); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

func TestExecTaskStreamingExitedTask(t *testing.T) {
	h := newHarness(t)
	cfg := h.sh(`exit 0`)
	h.start(cfg)
	h.wait(cfg.ID)
	_, err := h.d.ExecTaskStreaming(context.Background(), cfg.ID, &drivers.ExecOptions{Command: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("exec into an exited task: err = %v, want one saying it exited", err)
	}
}
