package client

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/drover-io/drover/structs"
)

// defaultCPUMHz is assumed per core when /proc/cpuinfo reports no frequency.
const defaultCPUMHz = 1000

// hostSources is what the host fingerprint is computed from; gathering
// them (files, syscalls) is separate so that fingerprintHost is pure.
type hostSources struct {
	CPUInfo       io.Reader // /proc/cpuinfo
	MemInfo       io.Reader // /proc/meminfo
	OSRelease     io.Reader // /etc/os-release
	KernelName    string    // runtime.GOOS
	KernelRelease string    // /proc/sys/kernel/osrelease
	CPUMaxFreqKHz string    // /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq
	Arch          string    // runtime.GOARCH
	NumCPU        int       // runtime.NumCPU, when cpuinfo lists no processors
	Hostname      string
	DiskTotal     uint64 // bytes of the alloc dir's filesystem
	DiskFree      uint64
	Version       string
}

// hostFingerprint is the node's attributes and capacity.
type hostFingerprint struct {
	Attributes map[string]string
	Resources  structs.NodeResources
}

// fingerprintHost computes the node's attributes and resources. It is pure.
func fingerprintHost(src hostSources) hostFingerprint {
	attrs := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			attrs[k] = v
		}
	}
	cores, mhz, model := parseCPUInfo(src.CPUInfo)
	if cores == 0 {
		cores = src.NumCPU
	}
	if mhz == 0 {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(src.CPUMaxFreqKHz), 64); err == nil && khz > 0 {
			mhz = khz / 1000
		}
	}
	if mhz == 0 {
		mhz = defaultCPUMHz
	}
	total := int64(float64(cores) * mhz)
	set("cpu.arch", src.Arch)
	set("cpu.modelname", model)
	if cores > 0 {
		attrs["cpu.numcores"] = strconv.Itoa(cores)
		attrs["cpu.frequency"] = strconv.Itoa(int(mhz))
		attrs["cpu.totalcompute"] = strconv.FormatInt(total, 10)
	}
	mem := parseMemInfo(src.MemInfo)
	if mem > 0 {
		attrs["memory.totalbytes"] = strconv.FormatUint(mem, 10)
	}
	set("kernel.name", src.KernelName)
	set("kernel.version", strings.TrimSpace(src.KernelRelease))
	osName, osVersion := parseOSRelease(src.OSRelease)
	set("os.name", osName)
	set("os.version", osVersion)
	set("unique.hostname", src.Hostname)
	set("drover.version", src.Version)
	if src.DiskTotal > 0 {
		attrs["unique.storage.bytestotal"] = strconv.FormatUint(src.DiskTotal, 10)
		attrs["unique.storage.bytesfree"] = strconv.FormatUint(src.DiskFree, 10)
	}
	return hostFingerprint{
		Attributes: attrs,
		Resources: structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: total, TotalCpuCores: uint16(cores)},
			Memory: structs.NodeMemoryResources{MemoryMB: int64(mem / (1024 * 1024))},
			Disk:   structs.NodeDiskResources{DiskMB: int64(src.DiskFree / (1024 * 1024))},
		},
	}
}

// parseCPUInfo returns the number of logical processors, the highest
// per-core MHz and the model name from /proc/cpuinfo.
func parseCPUInfo(r io.Reader) (cores int, mhz float64, model string) {
	if r == nil {
		return 0, 0, ""
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			cores++
		case "cpu MHz":
			if f, err := strconv.ParseFloat(v, 64); err == nil && f > mhz {
				mhz = f
			}
		case "model name":
			if model == "" {
				model = v
			}
		}
	}
	return cores, mhz, model
}

// parseMemInfo returns MemTotal in bytes from /proc/meminfo.
func parseMemInfo(r io.Reader) uint64 {
	if r == nil {
		return 0
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "MemTotal" {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			return 0
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0
		}
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			n *= 1024
		}
		return n
	}
	return 0
}

// parseOSRelease returns ID and VERSION_ID from /etc/os-release.
func parseOSRelease(r io.Reader) (name, version string) {
	if r == nil {
		return "", ""
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			name = v
		case "VERSION_ID":
			version = v
		}
	}
	return name, version
}
