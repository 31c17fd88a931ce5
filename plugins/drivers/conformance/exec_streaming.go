package conformance

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/drover-io/drover/plugins/drivers"
)

// skipExecStreaming says why the streaming exec check does not apply.
func skipExecStreaming(h *harness) string {
	if h.spec.ExecEchoCommand == nil {
		return "spec has no exec echo command"
	}
	if _, ok := h.d.(drivers.ExecStreamingPlugin); !ok {
		return "driver is not a drivers.ExecStreamingPlugin"
	}
	return ""
}

// syncBuffer collects output the driver writes from its goroutines.
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

// checkExecStreaming runs the echo command in a running task with piped
// stdin, and checks the errors for an unknown task and an empty command.
func checkExecStreaming(h *harness) {
	d := h.d.(drivers.ExecStreamingPlugin)
	cfg, _ := h.start(h.spec.RunForever)
	const input = "conformance line one\nline two\n"
	var stdout, stderr syncBuffer
	res, err := d.ExecTaskStreaming(h.ctx(), cfg.ID, &drivers.ExecOptions{
		Command: h.spec.ExecEchoCommand,
		Stdin:   io.NopCloser(strings.NewReader(input)),
		Stdout:  &stdout,
		Stderr:  &stderr,
	})
	if errors.Is(err, drivers.ErrNotSupported) {
		h.t.Skipf("driver does not support streaming exec: %v", err)
	}
	if err != nil {
		h.t.Fatalf("ExecTaskStreaming(%q): %v", h.spec.ExecEchoCommand, err)
	}
	if res == nil || !res.Successful() {
		h.t.Fatalf("ExecTaskStreaming(%q) = %+v (stderr %q), want a successful exit", h.spec.ExecEchoCommand, res, stderr.String())
	}
	if got := stdout.String(); got != input {
		h.t.Fatalf("ExecTaskStreaming(%q) stdout = %q, want the input %q", h.spec.ExecEchoCommand, got, input)
	}

	if _, err := d.ExecTaskStreaming(h.ctx(), "no-such-task", &drivers.ExecOptions{Command: h.spec.ExecEchoCommand}); !errors.Is(err, drivers.ErrTaskNotFound) {
		h.t.Errorf("ExecTaskStreaming of an unknown task: %v, want drivers.ErrTaskNotFound", err)
	}
	if _, err := d.ExecTaskStreaming(h.ctx(), cfg.ID, &drivers.ExecOptions{}); err == nil {
		h.t.Error("ExecTaskStreaming with no command succeeded")
	}
}
