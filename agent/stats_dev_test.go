package agent

import (
	"testing"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// TestDevAgentResourceStats: a mock_driver task's fixed sample (1 % CPU,
// 10 ticks, 1 MiB RSS) reaches GET /v1/client/allocation/:id/stats per task
// and summed for the allocation, and Nomad's Go client decodes both stats
// endpoints.
func TestDevAgentResourceStats(t *testing.T) {
	ta := startDevAgent(t)
	body := `{"Job": {"ID": "stats", "Type": "service",
		"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [
		{"Name": "a", "Driver": "mock_driver", "Config": {"run_for": "1h"}, "Resources": {"CPU": 100, "MemoryMB": 32}},
		{"Name": "b", "Driver": "mock_driver", "Config": {"run_for": "1h"}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`
	ta.must("PUT", "/v1/jobs", body, nil)
	var allocs []*structs.AllocListStub
	ta.watch("the alloc to run", "/v1/job/stats/allocations", &allocs, func() bool {
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	id := allocs[0].ID

	var usage api.AllocResourceUsage
	// The client samples its tasks on its own schedule; the stats
	// endpoint has no blocking query.
	waitFor(t, "both tasks' samples", func() bool {
		ta.must("GET", "/v1/client/allocation/"+id+"/stats", "", &usage)
		for _, name := range []string{"a", "b"} {
			tu := usage.Tasks[name]
			if tu == nil || tu.ResourceUsage.MemoryStats.RSS == 0 {
				return false
			}
		}
		return true
	})
	for _, name := range []string{"a", "b"} {
		ru := usage.Tasks[name].ResourceUsage
		if ru.CpuStats.Percent != 1 || ru.CpuStats.TotalTicks != 10 || ru.MemoryStats.RSS != 1<<20 ||
			len(ru.MemoryStats.Measured) == 0 || len(ru.CpuStats.Measured) == 0 || usage.Tasks[name].Timestamp == 0 {
			t.Errorf("task %s usage = %+v %+v", name, ru.CpuStats, ru.MemoryStats)
		}
	}
	if ru := usage.ResourceUsage; ru.CpuStats.Percent != 2 || ru.CpuStats.TotalTicks != 20 || ru.MemoryStats.RSS != 2<<20 {
		t.Errorf("alloc total = %+v %+v, want the sum of the tasks", ru.CpuStats, ru.MemoryStats)
	}

	// Nomad's Go client decodes drover's answers.
	cfg := nomad.DefaultConfig()
	cfg.Address = ta.base
	cfg.HttpClient = ta.hc
	c, err := nomad.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nu, err := c.Allocations().Stats(&nomad.Allocation{ID: id}, nil)
	if err != nil {
		t.Fatalf("nomad Allocations().Stats: %v", err)
	}
	if nu.ResourceUsage == nil || nu.ResourceUsage.MemoryStats.RSS != 2<<20 || nu.Tasks["a"].ResourceUsage.CpuStats.Percent != 1 {
		t.Errorf("nomad's decoding = %+v", nu)
	}
	hs, err := c.Nodes().Stats("", nil)
	if err != nil {
		t.Fatalf("nomad Nodes().Stats: %v", err)
	}
	if hs.Memory == nil || hs.Memory.Total == 0 || len(hs.CPU) == 0 || hs.AllocDirStats == nil || hs.AllocDirStats.Size == 0 ||
		len(hs.DiskStats) != 1 || hs.Uptime == 0 {
		t.Errorf("nomad's host stats = %+v", hs)
	}
}
