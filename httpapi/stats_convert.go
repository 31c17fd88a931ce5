package httpapi

import (
	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/plugins/drivers"
)

// What a driver sample measures (Nomad's Measured lists): the fields of
// drivers.TaskResourceUsage. System and user mode CPU time are not in the
// driver contract, so they are never listed.
var (
	measuredMemory = []string{"RSS", "Cache", "Swap", "Max Usage"}
	measuredCPU    = []string{"Percent", "Total Ticks"}
)

// apiTaskUsage renders a task's (or an allocation's summed) driver sample
// and device statistics in Nomad's shape. Without a sample, memory and
// CPU are zero and list nothing as measured, and the timestamp is now.
func apiTaskUsage(u *drivers.TaskResourceUsage, devices []*api.DeviceGroupStats, now int64) *api.TaskResourceUsage {
	out := &api.TaskResourceUsage{ResourceUsage: apiResourceUsage(u), Timestamp: now}
	out.ResourceUsage.DeviceStats = devices
	if u == nil {
		return out
	}
	if u.Timestamp > 0 {
		out.Timestamp = u.Timestamp
	}
	if len(u.Pids) > 0 {
		out.Pids = make(map[string]*api.ResourceUsage, len(u.Pids))
		for pid, pu := range u.Pids {
			out.Pids[pid] = apiResourceUsage(pu)
		}
	}
	return out
}

func apiResourceUsage(u *drivers.TaskResourceUsage) *api.ResourceUsage {
	if u == nil {
		return &api.ResourceUsage{MemoryStats: &api.MemoryStats{}, CpuStats: &api.CpuStats{}}
	}
	return &api.ResourceUsage{
		MemoryStats: &api.MemoryStats{
			RSS:      u.MemoryRSS,
			Cache:    u.MemoryCache,
			Swap:     u.MemorySwap,
			MaxUsage: u.MemoryMaxUsage,
			Measured: measuredMemory,
		},
		CpuStats: &api.CpuStats{
			Percent:    u.CPUPercent,
			TotalTicks: u.CPUTotalTicks,
			Measured:   measuredCPU,
		},
	}
}

// fillHostStats copies a host sample into out; hs may be nil.
func fillHostStats(out *api.HostStats, hs *stats.HostStats) {
	if hs == nil {
		return
	}
	out.Uptime = hs.Uptime
	out.CPUTicksConsumed = hs.CPUTicksConsumed
	if !hs.Timestamp.IsZero() {
		out.Timestamp = hs.Timestamp.UnixNano()
	}
	if m := hs.Memory; m != nil {
		out.Memory = &api.HostMemoryStats{Total: m.Total, Available: m.Available, Used: m.Used, Free: m.Free}
	}
	for _, c := range hs.CPU {
		out.CPU = append(out.CPU, &api.HostCPUStats{CPU: c.CPU, User: c.User, System: c.System, Idle: c.Idle})
	}
	if d := hs.AllocDirDisk; d != nil {
		disk := func() *api.HostDiskStats {
			return &api.HostDiskStats{Device: d.Device, Mountpoint: d.Mountpoint, Size: d.Size, Used: d.Used,
				Available: d.Available, UsedPercent: d.UsedPercent, InodesUsedPercent: d.InodesUsedPercent}
		}
		out.AllocDirStats = disk()
		out.DiskStats = []*api.HostDiskStats{disk()}
	}
}
