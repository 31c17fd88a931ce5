package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/drover-io/drover/api"
)

// formatAllocStats renders, per task, its CPU and memory used against its
// limits and its device statistics, then the same for the allocation as a
// whole (`alloc status -stats`). The limits are the alloc's reservations.
func formatAllocStats(alloc *api.Allocation, u *api.AllocResourceUsage) string {
	var b strings.Builder
	names := make([]string, 0, len(u.Tasks))
	for n := range u.Tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	var cpuLimit, memLimit int64
	for _, n := range names {
		t := u.Tasks[n]
		if t == nil || t.ResourceUsage == nil {
			continue
		}
		cpu, mem := taskLimits(alloc, n)
		cpuLimit, memLimit = cpuLimit+cpu, memLimit+mem
		fmt.Fprintf(&b, "\nTask %q Resources\n", n)
		b.WriteString(formatUsage(t.ResourceUsage, cpu, mem))
		if len(t.ResourceUsage.DeviceStats) > 0 {
			fmt.Fprintf(&b, "\nTask %q Device Stats\n", n)
			b.WriteString(formatDeviceStats(t.ResourceUsage.DeviceStats))
		}
	}
	if u.ResourceUsage != nil {
		b.WriteString("\nAllocation Resources\n")
		b.WriteString(formatUsage(u.ResourceUsage, cpuLimit, memLimit))
		if len(u.ResourceUsage.DeviceStats) > 0 {
			b.WriteString("\nAllocation Device Stats\n")
			b.WriteString(formatDeviceStats(u.ResourceUsage.DeviceStats))
		}
	}
	return b.String()
}

// taskLimits returns a task's CPU (MHz) and memory (MB) reservation.
func taskLimits(alloc *api.Allocation, task string) (cpu, mem int64) {
	if alloc == nil || alloc.AllocatedResources == nil {
		return 0, 0
	}
	tr := alloc.AllocatedResources.Tasks[task]
	if tr == nil {
		return 0, 0
	}
	return tr.Cpu.CpuShares, tr.Memory.MemoryMB
}

// formatUsage renders one row: "12% 120 MHz/500 MHz" and "30 MiB/256 MiB"
// (a limit of 0 is left out; an unmeasured value is "-").
func formatUsage(ru *api.ResourceUsage, cpuLimit, memLimitMB int64) string {
	cpu, mem := "-", "-"
	if c := ru.CpuStats; c != nil && len(c.Measured) > 0 {
		cpu = fmt.Sprintf("%s%% %d MHz", strings.TrimSuffix(strconv.FormatFloat(c.Percent, 'f', 1, 64), ".0"), int64(c.TotalTicks))
	}
	if cpuLimit > 0 {
		cpu += "/" + strconv.FormatInt(cpuLimit, 10) + " MHz"
	}
	if m := ru.MemoryStats; m != nil && len(m.Measured) > 0 {
		mem = mebibytes(m.RSS)
	}
	if memLimitMB > 0 {
		mem += "/" + strconv.FormatInt(memLimitMB, 10) + " MiB"
	}
	return formatTable([]string{"CPU", "Memory"}, [][]string{{cpu, mem}})
}

// mebibytes renders a byte count in whole MiB ("30 MiB"), or finer below
// one MiB.
func mebibytes(n uint64) string {
	if n < 1<<20 {
		return humanBytes(n)
	}
	return strconv.FormatUint((n+1<<19)>>20, 10) + " MiB"
}

// formatHostStats renders the host's CPU, memory, alloc dir disk and
// uptime, then the per-CPU use (`node status -stats`).
func formatHostStats(hs *api.HostStats) string {
	var b strings.Builder
	b.WriteString("\nHost Resource Utilization\n")
	cpu, mem, disk := "-", "-", "-"
	if len(hs.CPU) > 0 {
		var busy float64
		for _, c := range hs.CPU {
			busy += 100 - c.Idle
		}
		cpu = fmt.Sprintf("%.1f%% of %d CPUs", busy/float64(len(hs.CPU)), len(hs.CPU))
	}
	if m := hs.Memory; m != nil {
		mem = humanBytes(m.Used) + "/" + humanBytes(m.Total)
	}
	if d := hs.AllocDirStats; d != nil {
		disk = fmt.Sprintf("%s/%s (%.1f%%)", humanBytes(d.Used), humanBytes(d.Size), d.UsedPercent)
	}
	b.WriteString(formatTable([]string{"CPU", "Memory Used/Total", "Alloc Dir Disk Used/Size", "Uptime"},
		[][]string{{cpu, mem, disk, strconv.FormatUint(hs.Uptime, 10) + "s"}}))
	if len(hs.CPU) > 0 {
		rows := make([][]string, 0, len(hs.CPU))
		for _, c := range hs.CPU {
			rows = append(rows, []string{c.CPU, pct(c.User), pct(c.System), pct(c.Idle)})
		}
		b.WriteString("\nCPU Stats\n")
		b.WriteString(formatTable([]string{"CPU", "User", "System", "Idle"}, rows))
	}
	b.WriteString("\nDevice Stats\n")
	b.WriteString(formatDeviceStats(hs.DeviceStats))
	return b.String()
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }
