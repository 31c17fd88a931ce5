package client

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// startTestShim starts a real shim (this test binary) running sleep for
// the task invocation cfg, in the state dir raw_exec would use, and makes
// sure it is gone when the test ends.
func startTestShim(t *testing.T, cfg *drivers.TaskConfig) *shim.Handle {
	t.Helper()
	dir, err := shim.TaskStateDir(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(cfg.AllocDir, "alloc", "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := shim.Start(ctx, exe, []string{shim.Subcommand}, &shim.Spec{
		ID: cfg.ID, Command: "/bin/sleep", Args: []string{"1000"}, Env: []string{"PATH=/bin:/usr/bin"},
		StdoutPath: filepath.Join(logs, cfg.Name+".stdout"), StderrPath: filepath.Join(logs, cfg.Name+".stderr"),
		StateDir: dir,
	})
	if err != nil {
		t.Fatalf("start shim: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Stop(ctx, "SIGKILL", 0)
		_ = h.CleanupAfterExit(ctx, 10*time.Millisecond)
	})
	return h
}

func taskCfg(root, allocID, inv string) *drivers.TaskConfig {
	return &drivers.TaskConfig{ID: allocID + "/web/" + inv, Name: "web", AllocID: allocID, AllocDir: filepath.Join(root, allocID)}
}

// TestClientReconcilesShimsAtStart: a starting client stops the shims of
// invocations its restored allocations do not know (an alloc whose state
// was lost, an old invocation) and fences a shim spec nobody launched yet,
// and leaves alone the shims its runners will re-attach to: by handle, or
// by start intent.
func TestClientReconcilesShimsAtStart(t *testing.T) {
	root := t.TempDir()
	db := state.NewMemDB()
	known := testJobAlloc("", map[string]any{})
	intent := testJobAlloc("", map[string]any{})
	for _, a := range []*structs.Allocation{known, intent} {
		if err := db.PutAllocation(a); err != nil {
			t.Fatal(err)
		}
	}
	knownCfg, intentCfg := taskCfg(root, known.ID, "aaaa0001"), taskCfg(root, intent.ID, "bbbb0001")
	if err := db.PutTaskRunnerLocalState(known.ID, "web", &state.LocalState{InvocationID: "aaaa0001",
		TaskHandle: &drivers.TaskHandle{Config: knownCfg, State: drivers.TaskStateRunning, DriverState: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutTaskRunnerLocalState(intent.ID, "web", &state.LocalState{InvocationID: "bbbb0001", StartIntent: intentCfg}); err != nil {
		t.Fatal(err)
	}
	knownShim := startTestShim(t, knownCfg)
	intentShim := startTestShim(t, intentCfg)
	orphanShim := startTestShim(t, taskCfg(root, structs.GenerateUUID(), "cccc0001")) // alloc unknown
	oldShim := startTestShim(t, taskCfg(root, known.ID, "aaaa0000"))                  // an old invocation
	// A shim nobody knows that ran and exited: nothing to stop.
	exitedCfg := taskCfg(root, structs.GenerateUUID(), "eeee0001")
	exited := startTestShim(t, exitedCfg)
	if err := exited.Stop(context.Background(), "SIGKILL", 0); err != nil {
		t.Fatal(err)
	}
	// A spec written by an agent that died before it launched the shim.
	unlaunched := taskCfg(root, structs.GenerateUUID(), "dddd0001")
	unlaunchedDir, _ := shim.TaskStateDir(unlaunched)
	if err := os.MkdirAll(unlaunchedDir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(&shim.Spec{ID: unlaunched.ID, Command: "/bin/sleep", StateDir: unlaunchedDir})
	if err := os.WriteFile(filepath.Join(unlaunchedDir, "spec.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	driver := mock.New(nil)
	defer driver.Shutdown()
	c, err := New(&Config{RPC: newFakeServer(), Drivers: map[string]drivers.DriverPlugin{mock.Name: driver},
		StateDB: db, AllocDir: root, NodeName: "test-node"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for name, h := range map[string]*shim.Handle{"unknown alloc": orphanShim, "old invocation": oldShim} {
		s, err := h.Status(ctx)
		if err != nil || s.Running || s.Exit == nil || s.Exit.Signal != int(syscall.SIGKILL) {
			t.Errorf("%s: shim status %+v, %v; want its task killed", name, s, err)
		}
	}
	for name, h := range map[string]*shim.Handle{"handle": knownShim, "intent": intentShim} {
		if s, err := h.Status(ctx); err != nil || !s.Running {
			t.Errorf("shim known by %s: status %+v, %v; want it left running", name, s, err)
		}
	}
	if _, err := os.Stat(filepath.Join(unlaunchedDir, "spec.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the unlaunched spec is still there (%v): a late shim could start it", err)
	}
	if e, err := exited.Wait(ctx); err != nil || e.Signal != int(syscall.SIGKILL) {
		t.Errorf("the exited shim's record: %+v, %v", e, err)
	}
}
