package command

import (
	"testing"

	"github.com/drover-io/drover/api"
)

func TestFormatAllocStatsGolden(t *testing.T) {
	measured := func(pct, ticks float64, rss uint64) *api.ResourceUsage {
		return &api.ResourceUsage{
			CpuStats:    &api.CpuStats{Percent: pct, TotalTicks: ticks, Measured: []string{"Percent", "Total Ticks"}},
			MemoryStats: &api.MemoryStats{RSS: rss, Measured: []string{"RSS"}},
		}
	}
	util := 50.0
	dev := []*api.DeviceGroupStats{{Vendor: "drover", Type: "gpu", Name: "fake", InstanceStats: map[string]*api.DeviceStats{
		"fake-0": {Summary: &api.StatValue{FloatNumeratorVal: &util, Unit: "%", Desc: "utilisation"}}}}}
	web := measured(12, 120, 30<<20)
	web.DeviceStats = dev
	total := measured(12, 120, 30<<20+512<<10)
	total.DeviceStats = dev
	alloc := &api.Allocation{AllocatedResources: &api.AllocatedResources{Tasks: map[string]*api.AllocatedTaskResources{
		"web":     {Cpu: api.AllocatedCpuResources{CpuShares: 500}, Memory: api.AllocatedMemoryResources{MemoryMB: 256}},
		"sidecar": {Cpu: api.AllocatedCpuResources{CpuShares: 100}, Memory: api.AllocatedMemoryResources{MemoryMB: 64}},
		"pending": {Cpu: api.AllocatedCpuResources{CpuShares: 100}, Memory: api.AllocatedMemoryResources{MemoryMB: 32}},
	}}}
	usage := &api.AllocResourceUsage{
		Tasks: map[string]*api.TaskResourceUsage{
			"web":     {ResourceUsage: web},
			"sidecar": {ResourceUsage: measured(0, 0, 512<<10)},
			"pending": {ResourceUsage: &api.ResourceUsage{CpuStats: &api.CpuStats{}, MemoryStats: &api.MemoryStats{}}},
		},
		ResourceUsage: total,
	}
	golden(t, "alloc_status_stats", formatAllocStats(alloc, usage))
}

func TestFormatHostStatsGolden(t *testing.T) {
	hs := &api.HostStats{
		Memory: &api.HostMemoryStats{Total: 8 << 30, Used: 3 << 30, Available: 5 << 30, Free: 1 << 30},
		CPU: []*api.HostCPUStats{
			{CPU: "cpu0", User: 20, System: 5, Idle: 75},
			{CPU: "cpu1", User: 2.5, System: 2.5, Idle: 95},
		},
		AllocDirStats: &api.HostDiskStats{Device: "/dev/sda1", Mountpoint: "/", Size: 100 << 30, Used: 25 << 30, UsedPercent: 25},
		Uptime:        3600,
	}
	golden(t, "node_status_stats", formatHostStats(hs))
	golden(t, "node_status_stats_empty", formatHostStats(&api.HostStats{}))
}
