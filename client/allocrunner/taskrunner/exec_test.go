package taskrunner

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// plainDriver is the mock driver without its streaming exec.
type plainDriver struct{ drivers.DriverPlugin }

func TestTaskRunnerExecStreaming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Config: map[string]any{"exec_command": map[string]any{"stdout_string": "hello\n", "exit_code": 3}}}
		h := newHarness(t, testAlloc(structs.JobTypeService, task), nil, nil)
		opts := func(stdin string, out *bytes.Buffer) *drivers.ExecOptions {
			return &drivers.ExecOptions{Command: []string{"sh"}, Stdin: io.NopCloser(strings.NewReader(stdin)), Stdout: out}
		}
		var out bytes.Buffer
		if _, err := h.tr.ExecStreaming(context.Background(), opts("", &out)); structs.KindOf(err) != structs.KindConflict {
			t.Fatalf("exec before the task runs: %v, want a conflict", err)
		}

		go h.tr.Run()
		waitState(t, h.tr, "running", isRunning)
		before := eventTypes(h.tr.TaskState())
		res, err := h.tr.ExecStreaming(context.Background(), opts("typed\n", &out))
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 3 || out.String() != "hello\ntyped\n" {
			t.Fatalf("exit %d, output %q", res.ExitCode, out.String())
		}
		if got := eventTypes(h.tr.TaskState()); !slices.Equal(got, before) {
			t.Errorf("exec changed the task's events: %q, then %q", before, got)
		}

		if err := h.tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	})
}

// A driver without interactive exec makes exec an invalid request.
func TestTaskRunnerExecNotSupported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := mock.New(nil)
		defer d.Shutdown()
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}})
		dir := allocdir.New(t.TempDir(), alloc.ID)
		if err := dir.Build(); err != nil {
			t.Fatal(err)
		}
		tr, err := New(&Config{Alloc: alloc, Task: alloc.Job.TaskGroups[0].Tasks[0], AllocDir: dir, Driver: plainDriver{d},
			StateDB: state.NewMemDB(), KillGrace: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		go tr.Run()
		waitState(t, tr, "running", isRunning)
		_, err = tr.ExecStreaming(context.Background(), &drivers.ExecOptions{Command: []string{"sh"}})
		if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "does not support alloc exec") {
			t.Fatalf("driver without exec: %v", err)
		}
		if err := tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	})
}
