package plugins_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// rawExecTask returns a raw_exec task config running sleep in a fresh
// alloc dir.
func rawExecTask(t *testing.T, id string) *drivers.TaskConfig {
	t.Helper()
	alloc := t.TempDir()
	td := drivers.TaskDir{
		Dir:      filepath.Join(alloc, "web"),
		LocalDir: filepath.Join(alloc, "web", "local"),
		LogDir:   filepath.Join(alloc, "alloc", "logs"),
	}
	for _, dir := range []string{td.LocalDir, td.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &drivers.TaskConfig{
		ID: id, Name: "web", AllocID: "a1", AllocDir: alloc, TaskDir: td,
		StdoutPath: filepath.Join(td.LogDir, "web.stdout.0"),
		StderrPath: filepath.Join(td.LogDir, "web.stderr.0"),
		RawConfig:  json.RawMessage(`{"command":"sleep","args":["1000"]}`),
	}
}

// TestPluginRestart_TasksPreserved: a raw_exec plugin killed with SIGKILL
// leaves its task running; a new plugin process recovers it from the
// handle and can wait on and stop it (what the driver manager does after a
// crash, minus the backoff).
func TestPluginRestart_TasksPreserved(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := launchPlugin(t, "raw_exec")
	cfg := rawExecTask(t, "a1/web/1")
	h, err := first.Driver().StartTask(ctx, cfg)
	if err != nil {
		t.Fatalf("StartTask: %v", err)
	}

	if err := syscall.Kill(first.ReattachConfig().Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the plugin exits", first.Exited)
	if _, err := first.Driver().InspectTask(ctx, cfg.ID); !errors.Is(err, drivers.ErrPluginUnavailable) {
		t.Fatalf("InspectTask on the dead plugin: err = %v, want ErrPluginUnavailable", err)
	}

	second := launchPlugin(t, "raw_exec")
	d := second.Driver()
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer dcancel()
		if err := d.DestroyTask(dctx, cfg.ID, true); err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Errorf("DestroyTask: %v", err)
		}
	})
	if err := d.RecoverTask(ctx, h); err != nil {
		t.Fatalf("RecoverTask in the restarted plugin: %v", err)
	}
	st, err := d.InspectTask(ctx, cfg.ID)
	if err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("recovered task = %+v, %v; want running", st, err)
	}
	waitCh, err := d.WaitTask(ctx, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.StopTask(ctx, cfg.ID, 5*time.Second, "SIGTERM"); err != nil {
		t.Fatalf("StopTask: %v", err)
	}
	select {
	case res := <-waitCh:
		if res == nil || res.Signal != int(syscall.SIGTERM) {
			t.Fatalf("exit = %+v, want signal SIGTERM", res)
		}
	case <-ctx.Done():
		t.Fatal("no exit after StopTask")
	}
}
