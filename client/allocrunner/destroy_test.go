package allocrunner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/structs"
)

// gone reports whether pid no longer runs (absent, or a zombie).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// TestAllocRunnerDestroyStopsLiveShims: destroying an allocation (garbage
// collection) never removes its directory from under a live shim: a shim
// nobody supervises (an invocation the state lost) is stopped, its task
// killed, before the directory goes.
func TestAllocRunnerDestroyStopsLiveShims(t *testing.T) {
	alloc := testAlloc(structs.JobTypeService, mockTask("web", map[string]any{"run_for": "1h"}))
	h := newHarness(t, alloc)
	go h.ar.Run()
	waitChange(t, h.ar, "the task running", isRunning(h.ar))

	allocDir := h.ar.AllocDir().AllocDir
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	orphan, err := shim.Start(ctx, exe, []string{shim.Subcommand}, &shim.Spec{
		ID: alloc.ID + "/web/lost0001", Command: "/bin/sleep", Args: []string{"1000"},
		StdoutPath: filepath.Join(allocDir, "alloc", "logs", "lost.stdout"), StderrPath: filepath.Join(allocDir, "alloc", "logs", "lost.stderr"),
		StateDir: filepath.Join(allocDir, shim.StatesDir, "web-lost0001"),
	})
	if err != nil {
		t.Fatal(err)
	}
	st := orphan.State()
	t.Cleanup(func() { _ = orphan.Stop(context.Background(), "SIGKILL", 0) })

	h.ar.Destroy()
	if !gone(st.TaskPID) || !gone(st.ShimPID) {
		t.Errorf("the orphan shim %d (task %d) still runs after the alloc was destroyed", st.ShimPID, st.TaskPID)
	}
	if _, err := os.Stat(allocDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alloc dir: %v, want it removed once nothing runs from it", err)
	}
}
