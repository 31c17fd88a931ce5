package client

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/version"
)

// gatherHostSources reads what fingerprintHost needs from the running
// system; missing files leave their source empty, and the sources of
// fingerprinters that fp turns off are not read. It makes no network call.
func gatherHostSources(cfg *Config, fp FingerprintConfig) hostSources {
	read := func(path string) *bytes.Reader {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		return bytes.NewReader(b)
	}
	readString := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	src := hostSources{
		KernelName:   runtime.GOOS,
		Arch:         runtime.GOARCH,
		NumCPU:       runtime.NumCPU(),
		Version:      cfg.Version,
		NomadVersion: version.NomadVersion,
		Revision:     buildRevision(),
		HTTPAddr:     cfg.HTTPAddr,
	}
	if src.Version == "" {
		src.Version = Version
	}
	if r := read("/proc/cpuinfo"); r != nil {
		src.CPUInfo = r
	}
	if r := read("/proc/meminfo"); r != nil {
		src.MemInfo = r
	}
	if fp.enabled("host") {
		if r := read("/etc/os-release"); r != nil {
			src.OSRelease = r
		}
		src.KernelRelease = readString("/proc/sys/kernel/osrelease")
		var uts syscall.Utsname
		if err := syscall.Uname(&uts); err == nil {
			src.KernelArch = utsString(uts.Machine[:])
		}
		for _, p := range []string{"/sys/class/dmi/id/product_uuid", "/etc/machine-id", "/proc/sys/kernel/random/boot_id"} {
			if id := strings.ToLower(readString(p)); id != "" {
				src.HostID = id
				break
			}
		}
	}
	src.CPUMaxFreqKHz = readString("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
	src.Hostname, _ = os.Hostname()
	var st syscall.Statfs_t
	if err := syscall.Statfs(cfg.AllocDir, &st); err == nil {
		src.DiskTotal = st.Blocks * uint64(st.Bsize)
		src.DiskFree = st.Bavail * uint64(st.Bsize)
	}
	if fp.enabled("storage") || fp.enabled("cgroup") {
		mounts := parseMountInfo(read("/proc/self/mountinfo"))
		if abs, err := filepath.Abs(cfg.AllocDir); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real
			}
			src.DiskVolume = mountSource(mounts, abs)
		}
		src.CgroupVersion = cgroupVersion(mounts)
	}
	if fp.enabled("signal") {
		src.Signals = drivers.SignalNames()
	}
	if fp.enabled("network") || fp.NetworkInterface != "" {
		src.Interfaces = hostInterfaces()
		if r := read("/proc/net/route"); r != nil {
			src.DefaultIface = parseDefaultRoute(r)
		}
	}
	return src
}

// hostInterfaces lists the host's network interfaces and addresses.
func hostInterfaces() []netInterface {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := make([]netInterface, 0, len(ifaces))
	for _, i := range ifaces {
		ni := netInterface{Name: i.Name, Up: i.Flags&net.FlagUp != 0, Loopback: i.Flags&net.FlagLoopback != 0, MAC: i.HardwareAddr.String()}
		addrs, err := i.Addrs()
		if err == nil {
			for _, a := range addrs {
				if p, err := netip.ParsePrefix(a.String()); err == nil {
					ni.Addrs = append(ni.Addrs, p.Addr())
					ni.Prefixes = append(ni.Prefixes, p)
				}
			}
		}
		out = append(out, ni)
	}
	return out
}

// utsString turns a NUL-terminated utsname field into a string.
func utsString[T int8 | uint8](f []T) string {
	b := make([]byte, 0, len(f))
	for _, c := range f {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// buildRevision is the VCS revision the binary was built from, or "".
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
