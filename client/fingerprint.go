package client

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-io/drover/structs"
)

// defaultCPUMHz is assumed per core when /proc/cpuinfo reports no frequency.
const defaultCPUMHz = 1000

// FingerprintConfig selects and adjusts the node's host fingerprint (the
// agent's client block and client options).
type FingerprintConfig struct {
	// Allowlist, when not empty, runs only the named fingerprinters;
	// Denylist skips the named ones (client options fingerprint.allowlist
	// and fingerprint.denylist). The names are Nomad's: arch, cgroup,
	// cpu, host, memory, network, nomad, signal, storage. The node's
	// resources (CPU, memory, disk) are measured whatever the lists say:
	// the lists select the attributes reported.
	Allowlist []string
	Denylist  []string
	// NetworkInterface is the interface whose address is reported as
	// unique.network.ip-address; "" picks the default route's interface.
	// An interface that does not exist fails client.New.
	NetworkInterface string
	// PreferredAddressFamily is "ipv4", "ipv6" or "" (the first address).
	PreferredAddressFamily string
	// HostNetworks are the client's host_network blocks: the node's
	// addresses in them are tagged with their names (NodeNetworks).
	HostNetworks []*structs.ClientHostNetworkConfig
	// CPUTotalCompute (MHz), MemoryTotalMB, DiskTotalMB and DiskFreeMB
	// replace the measured values when not 0.
	CPUTotalCompute int
	MemoryTotalMB   int
	DiskTotalMB     int
	DiskFreeMB      int
}

// fingerprinterNames are the host fingerprinters, as Nomad names them.
var fingerprinterNames = []string{"arch", "cgroup", "cpu", "host", "memory", "network", "nomad", "signal", "storage"}

// enabled reports whether the named fingerprinter runs.
func (c *FingerprintConfig) enabled(name string) bool {
	if len(c.Allowlist) > 0 && !slices.Contains(c.Allowlist, name) {
		return false
	}
	return !slices.Contains(c.Denylist, name)
}

// nomadOnlyFingerprinters are Nomad's fingerprinters that drover does not
// run (cloud metadata, Consul, Vault, CNI...): lists may name them.
var nomadOnlyFingerprinters = []string{"bridge", "cni", "consul", "dynamic_host_volumes", "env_aws", "env_azure",
	"env_digitalocean", "env_gce", "host_volume_plugins", "landlock", "plugins_cni", "secrets_plugins", "vault"}

// UnknownFingerprinters returns the names in the lists that are neither
// fingerprinters of this agent nor Nomad's (typos), for a warning.
func (c *FingerprintConfig) UnknownFingerprinters() []string {
	var out []string
	for _, n := range append(slices.Clone(c.Allowlist), c.Denylist...) {
		if !slices.Contains(fingerprinterNames, n) && !slices.Contains(nomadOnlyFingerprinters, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// netInterface is one network interface of the host.
type netInterface struct {
	Name     string
	Up       bool
	Loopback bool
	MAC      string
	Addrs    []netip.Addr
	// Prefixes are Addrs with their networks, when known.
	Prefixes []netip.Prefix
}

// hostSources is what the host fingerprint is computed from; gathering
// them (files, syscalls) is separate so that fingerprintHost is pure.
type hostSources struct {
	CPUInfo       io.Reader // /proc/cpuinfo
	MemInfo       io.Reader // /proc/meminfo
	OSRelease     io.Reader // /etc/os-release
	KernelName    string    // runtime.GOOS
	KernelRelease string    // /proc/sys/kernel/osrelease
	KernelArch    string    // uname's machine ("x86_64")
	CPUMaxFreqKHz string    // /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq
	Arch          string    // runtime.GOARCH
	NumCPU        int       // runtime.NumCPU, when cpuinfo lists no processors
	Hostname      string
	HostID        string // DMI product UUID, else machine-id, else boot id
	DiskTotal     uint64 // bytes of the alloc dir's filesystem
	DiskFree      uint64
	DiskVolume    string // the device (mount source) of that filesystem
	CgroupVersion string // "1", "2" or ""
	Signals       []string
	Interfaces    []netInterface
	DefaultIface  string // the default route's interface
	Version       string // drover's version
	NomadVersion  string // the Nomad version drover follows
	Revision      string // drover's source revision
	HTTPAddr      string // the agent's HTTP address
}

// hostFingerprint is the node's attributes and capacity.
type hostFingerprint struct {
	Attributes map[string]string
	Resources  structs.NodeResources
	// Warnings are about the configuration (a host network without
	// addresses), for the log.
	Warnings []string
}

// fingerprintHost computes the node's attributes and resources. It is pure.
// Its only error is a configured network interface that the host lacks.
func fingerprintHost(src hostSources, cfg FingerprintConfig) (hostFingerprint, error) {
	attrs := map[string]string{}
	set := func(name, k, v string) {
		if v != "" && cfg.enabled(name) {
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
	if cfg.CPUTotalCompute > 0 {
		total = int64(cfg.CPUTotalCompute)
	}
	mem := parseMemInfo(src.MemInfo)
	if cfg.MemoryTotalMB > 0 {
		mem = uint64(cfg.MemoryTotalMB) << 20
	}
	diskTotal, diskFree := src.DiskTotal, src.DiskFree
	if cfg.DiskTotalMB > 0 {
		diskTotal = uint64(cfg.DiskTotalMB) << 20
	}
	if cfg.DiskFreeMB > 0 {
		diskFree = uint64(cfg.DiskFreeMB) << 20
	}

	// arch
	set("arch", "cpu.arch", src.Arch)
	// cpu
	set("cpu", "cpu.modelname", model)
	if cores > 0 {
		set("cpu", "cpu.numcores", strconv.Itoa(cores))
		set("cpu", "cpu.frequency", strconv.Itoa(int(mhz)))
		set("cpu", "cpu.totalcompute", strconv.FormatInt(total, 10))
	}
	// memory
	if mem > 0 {
		set("memory", "memory.totalbytes", strconv.FormatUint(mem, 10))
	}
	// host
	set("host", "kernel.name", src.KernelName)
	set("host", "kernel.version", strings.TrimSpace(src.KernelRelease))
	set("host", "kernel.arch", src.KernelArch)
	osName, osVersion := parseOSRelease(src.OSRelease)
	set("host", "os.name", osName)
	set("host", "os.version", osVersion)
	set("host", "unique.hostname", src.Hostname)
	set("host", "unique.host_id", src.HostID)
	// cgroup
	set("cgroup", "os.cgroups.version", src.CgroupVersion)
	// signal
	set("signal", "os.signals", strings.Join(src.Signals, ","))
	// storage
	if diskTotal > 0 {
		set("storage", "unique.storage.volume", src.DiskVolume)
		set("storage", "unique.storage.bytestotal", strconv.FormatUint(diskTotal, 10))
		set("storage", "unique.storage.bytesfree", strconv.FormatUint(diskFree, 10))
	}
	// nomad
	set("nomad", "nomad.version", src.NomadVersion)
	set("nomad", "nomad.revision", src.Revision)
	set("nomad", "drover.version", src.Version)
	set("nomad", "unique.advertise.address", src.HTTPAddr)
	out := hostFingerprint{
		Attributes: attrs,
		Resources: structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: total, TotalCpuCores: uint16(cores)},
			Memory: structs.NodeMemoryResources{MemoryMB: int64(mem >> 20)},
			Disk:   structs.NodeDiskResources{DiskMB: int64(diskFree >> 20)},
		},
	}
	// network: the node's address, and its interfaces and host networks
	// for the scheduler's ports (fingerprint_network.go).
	if cfg.enabled("network") || cfg.NetworkInterface != "" {
		ip, err := selectIPAddress(src.Interfaces, src.DefaultIface, cfg.NetworkInterface, cfg.PreferredAddressFamily)
		if err != nil {
			return hostFingerprint{}, err
		}
		set("network", "unique.network.ip-address", ip)
		nets, legacy, warnings, err := nodeNetworks(src.Interfaces, ip, cfg.HostNetworks)
		if err != nil {
			return hostFingerprint{}, err
		}
		out.Resources.NodeNetworks, out.Resources.Networks, out.Warnings = nets, legacy, warnings
	}
	return out, nil
}

// selectIPAddress picks the node's address: the first usable address of
// the interface named want, else of the default route's interface, else of
// the first interface that is up and not a loopback. Link-local addresses
// are skipped; family ("ipv4", "ipv6") prefers one family. A wanted
// interface the host lacks is an error; no usable address is "".
func selectIPAddress(ifaces []netInterface, defaultIface, want, family string) (string, error) {
	byName := func(name string) *netInterface {
		for i := range ifaces {
			if ifaces[i].Name == name {
				return &ifaces[i]
			}
		}
		return nil
	}
	if want != "" {
		iface := byName(want)
		if iface == nil {
			names := make([]string, 0, len(ifaces))
			for _, i := range ifaces {
				names = append(names, i.Name)
			}
			return "", fmt.Errorf("client.network_interface %q: no such network interface on this host (it has: %s)", want, strings.Join(names, ", "))
		}
		return pickAddress(iface.addrs(), family), nil
	}
	if iface := byName(defaultIface); iface != nil && iface.Up {
		if ip := pickAddress(iface.addrs(), family); ip != "" {
			return ip, nil
		}
	}
	for _, iface := range ifaces {
		if !iface.Up || iface.Loopback {
			continue
		}
		if ip := pickAddress(iface.addrs(), family); ip != "" {
			return ip, nil
		}
	}
	return "", nil
}

// pickAddress returns the first address that is not link-local, of family
// when one of that family exists.
func pickAddress(addrs []netip.Addr, family string) string {
	var first netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
			continue
		}
		if (family == "ipv4" && a.Is4()) || (family == "ipv6" && a.Is6()) {
			return a.String()
		}
		if !first.IsValid() {
			first = a
		}
		if family == "" {
			break
		}
	}
	if first.IsValid() {
		return first.String()
	}
	return ""
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

// parseDefaultRoute returns the interface of the IPv4 default route from
// /proc/net/route, or "".
func parseDefaultRoute(r io.Reader) string {
	if r == nil {
		return ""
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// Iface Destination Gateway Flags RefCnt Use Metric Mask ...
		if len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" {
			return f[0]
		}
	}
	return ""
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	mountPoint string
	fsType     string
	source     string
}

// parseMountInfo reads /proc/self/mountinfo.
func parseMountInfo(r io.Reader) []mountEntry {
	if r == nil {
		return nil
	}
	var out []mountEntry
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 2 {
			continue
		}
		out = append(out, mountEntry{mountPoint: unescapeMount(f[4]), fsType: g[0], source: unescapeMount(g[1])})
	}
	return out
}

// unescapeMount decodes mountinfo's octal escapes ("\040" is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountSource returns the source (device) of the filesystem holding path:
// the mount with the longest mount point that contains path.
func mountSource(mounts []mountEntry, path string) string {
	best, bestLen := "", -1
	for _, m := range mounts {
		mp := strings.TrimSuffix(m.mountPoint, "/")
		if path == m.mountPoint || path == mp || strings.HasPrefix(path, mp+"/") {
			if len(mp) > bestLen {
				best, bestLen = m.source, len(mp)
			}
		}
	}
	return best
}

// cgroupVersion returns "2" when the unified hierarchy is mounted at
// /sys/fs/cgroup, "1" when cgroup v1 controllers are mounted, else "".
func cgroupVersion(mounts []mountEntry) string {
	v1 := false
	for _, m := range mounts {
		switch {
		case m.fsType == "cgroup2" && m.mountPoint == "/sys/fs/cgroup":
			return "2"
		case m.fsType == "cgroup":
			v1 = true
		}
	}
	if v1 {
		return "1"
	}
	return ""
}
