package grpcdriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
)

// lockedBuffer collects output written from the client's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote gets a value (if it has room) after each write.
	wrote chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startMock starts a mock task whose streaming exec prints banner and
// exits with code.
func startMock(t *testing.T, d drivers.DriverPlugin, banner string, code int) string {
	t.Helper()
	raw, err := json.Marshal(mock.TaskConfig{RunFor: mock.Duration(time.Hour), ExecCommand: &mock.ExecCommand{StdoutString: banner, ExitCode: code}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.StartTask(context.Background(), &drivers.TaskConfig{ID: "t1", Name: "web", RawConfig: raw}); err != nil {
		t.Fatal(err)
	}
	return "t1"
}

func TestExecTaskStreaming_OverGRPC(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	c, _ := serve(t, d)
	id := startMock(t, c, "banner\n", 7)

	// stdin, output and the exit code.
	var out lockedBuffer
	res, err := c.ExecTaskStreaming(context.Background(), id, &drivers.ExecOptions{
		Command: []string{"cat"}, Stdin: io.NopCloser(strings.NewReader("piped\n")), Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 || out.String() != "banner\npiped\n" {
		t.Fatalf("exit %d output %q", res.ExitCode, out.String())
	}

	// Terminal sizes travel to the driver, which reports them.
	pr, pw := io.Pipe()
	resize := make(chan drivers.TerminalSize)
	tty := &lockedBuffer{wrote: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		_, err := c.ExecTaskStreaming(context.Background(), id, &drivers.ExecOptions{
			Command: []string{"sh"}, TTY: true, Stdin: pr, Stdout: tty, Resize: resize,
		})
		done <- err
	}()
	resize <- drivers.TerminalSize{Height: 50, Width: 132}
	for !strings.Contains(tty.String(), "size 50x132\n") {
		<-tty.wrote
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Error kinds survive the transport.
	if _, err := c.ExecTaskStreaming(context.Background(), "nope", &drivers.ExecOptions{Command: []string{"sh"}}); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v, want ErrTaskNotFound", err)
	}
	if _, err := c.ExecTaskStreaming(context.Background(), id, &drivers.ExecOptions{}); err == nil {
		t.Fatal("empty command accepted")
	}

	// Cancelling ends the exec.
	ctx, cancel := context.WithCancel(context.Background())
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	first := &lockedBuffer{wrote: make(chan struct{}, 1)}
	go func() {
		_, err := c.ExecTaskStreaming(ctx, id, &drivers.ExecOptions{Command: []string{"sh"}, Stdin: pr2, Stdout: first})
		done <- err
	}()
	<-first.wrote // the banner: the exec runs
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled exec: %v, want context.Canceled", err)
	}
}

// noStreaming is a driver without streaming exec.
type noStreaming struct{ drivers.DriverPlugin }

func TestExecTaskStreaming_NotSupported(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	c, _ := serve(t, noStreaming{d})
	id := startMock(t, c, "", 0)
	_, err := c.ExecTaskStreaming(context.Background(), id, &drivers.ExecOptions{Command: []string{"sh"}})
	if !errors.Is(err, drivers.ErrNotSupported) {
		t.Fatalf("err = %v, want ErrNotSupported", err)
	}
}
