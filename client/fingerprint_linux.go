package client

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
)

// gatherHostSources reads what fingerprintHost needs from the running
// system; missing files leave their source empty.
func gatherHostSources(allocDir, version string) hostSources {
	read := func(path string) *bytes.Reader {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		return bytes.NewReader(b)
	}
	src := hostSources{
		KernelName: runtime.GOOS,
		Arch:       runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		Version:    version,
	}
	if r := read("/proc/cpuinfo"); r != nil {
		src.CPUInfo = r
	}
	if r := read("/proc/meminfo"); r != nil {
		src.MemInfo = r
	}
	if r := read("/etc/os-release"); r != nil {
		src.OSRelease = r
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		src.KernelRelease = string(b)
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
		src.CPUMaxFreqKHz = string(b)
	}
	src.Hostname, _ = os.Hostname()
	var st syscall.Statfs_t
	if err := syscall.Statfs(allocDir, &st); err == nil {
		src.DiskTotal = st.Blocks * uint64(st.Bsize)
		src.DiskFree = st.Bavail * uint64(st.Bsize)
	}
	return src
}
