package agent

import (
	"testing"
	"time"
)

// TestAgentPassesGCConfigToClient proves the client block's gc_* keys reach
// the node agent's garbage collector.
func TestAgentPassesGCConfigToClient(t *testing.T) {
	cfg := &Config{DevMode: true, HTTPPort: 0}
	cfg.Client.GC = ClientGCConfig{Interval: 7 * time.Second, MaxAllocs: 3, DiskUsageThreshold: 55, InodeUsageThreshold: 44}
	a, err := NewAgent(cfg, nil)
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	if err := a.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	got := a.client.GCConfig()
	if got.Interval != 7*time.Second || got.MaxAllocs != 3 || got.DiskUsageThreshold != 55 || got.InodeUsageThreshold != 44 {
		t.Fatalf("client GC config = %+v, want the agent's", got)
	}
}
