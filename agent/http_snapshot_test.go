package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-io/drover/client/allocwatcher"
	"github.com/drover-io/drover/structs"
)

func TestDevAgentAllocSnapshot(t *testing.T) {
	ta := startDevAgent(t)
	body := `{"Job": {"ID": "snap", "Type": "service",
		"TaskGroups": [{"Name": "g", "Count": 1, "EphemeralDisk": {"Sticky": true, "Migrate": true, "SizeMB": 10},
		"Tasks": [{"Name": "t", "Driver": "mock_driver", "Config": {"run_for": "1h"}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`
	ta.must("PUT", "/v1/jobs", body, nil)
	var allocs []*structs.AllocListStub
	ta.watch("the alloc to run", "/v1/job/snap/allocations", &allocs, func() bool {
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	id := allocs[0].ID
	dir, err := ta.agent.client.AllocDir(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alloc", "data", "f.txt"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, h, b := ta.do("GET", allocwatcher.SnapshotPath(id), "")
	if code != 200 || h.Get("Content-Type") != "application/gzip" {
		t.Fatalf("snapshot = %d %s: %s", code, h.Get("Content-Type"), b)
	}
	dest := t.TempDir()
	if err := allocwatcher.Unpack(bytes.NewReader(b), dest, allocwatcher.UnpackLimits{MaxBytes: 1 << 20, Tasks: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "alloc", "data", "f.txt")); err != nil || string(got) != "data" {
		t.Errorf("f.txt = %q, %v", got, err)
	}
	if code, _, b := ta.do("GET", allocwatcher.SnapshotPath("nope"), ""); code != 404 {
		t.Errorf("unknown alloc = %d %s", code, b)
	}
}
