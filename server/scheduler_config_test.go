package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestSchedulerConfigKeepsNodeLimit: Nomad's NodeLimitForFeasibilityChecks
// reads back as it was set.
func TestSchedulerConfigKeepsNodeLimit(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	cfg := *structs.DefaultSchedulerConfiguration()
	cfg.NodeLimitForFeasibilityChecks = 123
	if _, err := s.SchedulerSetConfig(ctx, &structs.SchedulerSetConfigRequest{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	got, err := s.SchedulerGetConfig(ctx, &structs.SchedulerConfigRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got.SchedulerConfig.NodeLimitForFeasibilityChecks != 123 {
		t.Fatalf("NodeLimitForFeasibilityChecks = %d, want 123", got.SchedulerConfig.NodeLimitForFeasibilityChecks)
	}
}
