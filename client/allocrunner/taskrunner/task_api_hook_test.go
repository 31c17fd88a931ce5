package taskrunner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/structs"
)

// TestTaskAPIHookHoldsNoGoroutine: a task's API socket is served by the
// client's task API server, not by a goroutine of its own per task, and
// Stop removes it.
func TestTaskAPIHookHoldsNoGoroutine(t *testing.T) {
	api := newTaskAPI(t, "http://127.0.0.1:1", nil)
	dir, err := os.MkdirTemp("", "tapi")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	before := goleak.IgnoreCurrent()
	var hooks []*taskAPIHook
	for _, name := range []string{"a1", "a2", "a3"} {
		ad := allocdir.New(dir, name)
		if err := ad.Build(); err != nil {
			t.Fatal(err)
		}
		td := ad.NewTaskDir("t")
		if err := td.Build(); err != nil {
			t.Fatal(err)
		}
		h := &taskAPIHook{api: api, logger: slog.New(slog.DiscardHandler)}
		if err := h.Prestart(context.Background(), &PrestartRequest{Task: &structs.Task{Name: "t"}, TaskDir: td}, &PrestartResponse{}); err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, h)
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("the task API hooks started goroutines:\n%v", err)
	}
	for _, h := range hooks {
		h.Stop()
	}
	if n := api.Sockets(); n != 0 {
		t.Errorf("%d sockets served after Stop", n)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*", "t", "secrets", TaskAPISocketName)); len(m) != 0 {
		t.Errorf("sockets left: %v", m)
	}
}
