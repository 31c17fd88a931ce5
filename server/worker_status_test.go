package server

import (
	"slices"
	"testing"
)

// TestSchedulerWorkers: GET /v1/agent/schedulers reports each of the
// server's workers, running every scheduler type, started while the
// server runs and stopped once it shut down.
func TestSchedulerWorkers(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = 3 })
	info := s.SchedulerWorkers()
	if info.ServerID != s.config.NodeName {
		t.Errorf("ServerID %q, want %q", info.ServerID, s.config.NodeName)
	}
	if len(info.Schedulers) != 3 {
		t.Fatalf("%d workers, want 3: %+v", len(info.Schedulers), info.Schedulers)
	}
	ids := map[string]bool{}
	for _, w := range info.Schedulers {
		ids[w.ID] = true
		if w.Status != "Started" || (w.WorkloadStatus != workloadWaiting && w.WorkloadStatus != workloadScheduling) {
			t.Errorf("worker %s: status %s, workload %s; want Started, waiting or scheduling", w.ID, w.Status, w.WorkloadStatus)
		}
		for _, typ := range []string{"service", "batch", "system", "sysbatch", "_core"} {
			if !slices.Contains(w.EnabledSchedulers, typ) {
				t.Errorf("worker %s runs %v, not %s", w.ID, w.EnabledSchedulers, typ)
			}
		}
		if w.Started == "" {
			t.Errorf("worker %s: no start time", w.ID)
		}
	}
	if len(ids) != 3 {
		t.Errorf("worker IDs not distinct: %v", ids)
	}
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, w := range s.SchedulerWorkers().Schedulers {
		if w.Status != "Stopped" || w.WorkloadStatus != workloadStopped {
			t.Errorf("after shutdown, worker %s: status %s, workload %s", w.ID, w.Status, w.WorkloadStatus)
		}
	}
}
