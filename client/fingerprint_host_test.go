package client

import (
	"net"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
)

const routeFixture = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
eth1	000011AC	00000000	0001	0	0	0	0000FFFF	0	0	0
eth0	00000000	010200C0	0003	0	0	100	00000000	0	0	0
eth0	000200C0	00000000	0001	0	0	100	00FFFFFF	0	0	0
`

const mountinfoFixture = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
40 27 8:17 / /var/lib/drover rw,relatime shared:5 - xfs /dev/sdb1 rw
41 40 0:50 / /var/lib/drover/alloc\040dir rw - tmpfs my\040tmpfs rw
`

func TestParseDefaultRoute(t *testing.T) {
	if got := parseDefaultRoute(strings.NewReader(routeFixture)); got != "eth0" {
		t.Errorf("default route interface = %q, want eth0", got)
	}
	if got := parseDefaultRoute(strings.NewReader("Iface\tDestination\n")); got != "" {
		t.Errorf("no default route: %q", got)
	}
	if got := parseDefaultRoute(nil); got != "" {
		t.Errorf("nil: %q", got)
	}
}

func TestParseMountInfo(t *testing.T) {
	mounts := parseMountInfo(strings.NewReader(mountinfoFixture))
	if len(mounts) != 6 {
		t.Fatalf("mounts = %+v", mounts)
	}
	tests := map[string]string{
		"/var/lib/drover/alloc":             "/dev/sdb1",
		"/var/lib/drover":                   "/dev/sdb1",
		"/var/lib/droverx":                  "/dev/sda1", // not under /var/lib/drover
		"/var/lib/drover/alloc dir/a1/task": "my tmpfs",  // escaped spaces
		"/home/x":                           "/dev/sda1",
	}
	for path, want := range tests {
		if got := mountSource(mounts, path); got != want {
			t.Errorf("mountSource(%q) = %q, want %q", path, got, want)
		}
	}
	if got := cgroupVersion(mounts); got != "1" {
		t.Errorf("cgroup version = %q, want 1", got)
	}
	v2 := parseMountInfo(strings.NewReader("30 23 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"))
	if got := cgroupVersion(v2); got != "2" {
		t.Errorf("cgroup version = %q, want 2", got)
	}
	if got := cgroupVersion(nil); got != "" {
		t.Errorf("no cgroups: %q", got)
	}
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestSelectIPAddress(t *testing.T) {
	ifaces := []netInterface{
		{Name: "lo", Up: true, Loopback: true, Addrs: addrs("127.0.0.1", "::1")},
		{Name: "eth0", Up: true, Addrs: addrs("fe80::1", "10.0.0.5", "2001:db8::5")},
		{Name: "eth1", Up: true, Addrs: addrs("2001:db8::9", "192.168.1.9")},
		{Name: "down0", Up: false, Addrs: addrs("10.9.9.9")},
		{Name: "empty0", Up: true},
	}
	tests := []struct {
		name, def, want, family, ip string
		err                         bool
	}{
		{name: "default route interface", def: "eth0", ip: "10.0.0.5"},
		{name: "link-local skipped", def: "eth0", ip: "10.0.0.5"},
		{name: "first address of the interface", def: "eth1", ip: "2001:db8::9"},
		{name: "ipv4 preferred", def: "eth1", family: "ipv4", ip: "192.168.1.9"},
		{name: "ipv6 preferred", def: "eth0", family: "ipv6", ip: "2001:db8::5"},
		{name: "named interface wins", def: "eth0", want: "eth1", family: "ipv4", ip: "192.168.1.9"},
		{name: "loopback when named (dev)", def: "eth0", want: "lo", ip: "127.0.0.1"},
		{name: "no default route: first up non-loopback", def: "", ip: "10.0.0.5"},
		{name: "default route interface is down", def: "down0", ip: "10.0.0.5"},
		{name: "named interface without address", want: "empty0", ip: ""},
		{name: "missing interface", want: "eth9", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ip, err := selectIPAddress(ifaces, tc.def, tc.want, tc.family)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), `"eth9"`) || !strings.Contains(err.Error(), "lo, eth0, eth1") {
					t.Fatalf("error = %v", err)
				}
				return
			}
			if err != nil || ip != tc.ip {
				t.Fatalf("ip = %q, %v; want %q", ip, err, tc.ip)
			}
		})
	}
	if ip, _ := selectIPAddress(ifaces[:1], "", "", ""); ip != "" {
		t.Errorf("only a loopback: %q, want none", ip)
	}
}

func fullSources() hostSources {
	return hostSources{
		CPUInfo:       strings.NewReader("processor : 0\nmodel name : X\ncpu MHz : 2000\nprocessor : 1\n"),
		MemInfo:       strings.NewReader("MemTotal: 1024 kB\n"),
		OSRelease:     strings.NewReader("ID=debian\nVERSION_ID=\"12\"\n"),
		KernelName:    "linux",
		KernelRelease: "6.1.0-18-amd64",
		KernelArch:    "x86_64",
		Arch:          "amd64",
		Hostname:      "box",
		HostID:        "a1b2",
		DiskTotal:     200 << 20,
		DiskFree:      100 << 20,
		DiskVolume:    "/dev/sda1",
		CgroupVersion: "2",
		Signals:       []string{"SIGHUP", "SIGTERM"},
		Interfaces:    []netInterface{{Name: "eth0", Up: true, Addrs: addrs("10.0.0.5")}},
		DefaultIface:  "eth0",
		Version:       "0.1.0",
		NomadVersion:  "1.10.0",
		Revision:      "abc123",
		HTTPAddr:      "10.0.0.5:4646",
	}
}

func TestFingerprintHostAttributes(t *testing.T) {
	fp, err := fingerprintHost(fullSources(), FingerprintConfig{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cpu.arch": "amd64", "cpu.modelname": "X", "cpu.numcores": "2", "cpu.frequency": "2000", "cpu.totalcompute": "4000",
		"memory.totalbytes": "1048576",
		"kernel.name":       "linux", "kernel.version": "6.1.0-18-amd64", "kernel.arch": "x86_64",
		"os.name": "debian", "os.version": "12", "unique.hostname": "box", "unique.host_id": "a1b2",
		"os.cgroups.version": "2", "os.signals": "SIGHUP,SIGTERM",
		"unique.storage.volume": "/dev/sda1", "unique.storage.bytestotal": "209715200", "unique.storage.bytesfree": "104857600",
		"nomad.version": "1.10.0", "nomad.revision": "abc123", "drover.version": "0.1.0", "unique.advertise.address": "10.0.0.5:4646",
		"unique.network.ip-address": "10.0.0.5",
	}
	if !reflect.DeepEqual(fp.Attributes, want) {
		for k, v := range want {
			if fp.Attributes[k] != v {
				t.Errorf("%s = %q, want %q", k, fp.Attributes[k], v)
			}
		}
		for k, v := range fp.Attributes {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s = %q", k, v)
			}
		}
	}
}

func TestFingerprintHostLists(t *testing.T) {
	tests := []struct {
		name      string
		cfg       FingerprintConfig
		present   []string
		absent    []string
		wantError string
	}{
		{name: "denylist", cfg: FingerprintConfig{Denylist: []string{"network", "signal", "env_aws"}},
			present: []string{"cpu.arch", "kernel.name", "unique.storage.volume"}, absent: []string{"unique.network.ip-address", "os.signals"}},
		{name: "allowlist", cfg: FingerprintConfig{Allowlist: []string{"arch", "host"}},
			present: []string{"cpu.arch", "kernel.name", "os.name"}, absent: []string{"cpu.numcores", "memory.totalbytes", "nomad.version", "unique.network.ip-address"}},
		{name: "allowlist and denylist", cfg: FingerprintConfig{Allowlist: []string{"arch", "host"}, Denylist: []string{"host"}},
			present: []string{"cpu.arch"}, absent: []string{"kernel.name"}},
		{name: "network interface named but network denied", cfg: FingerprintConfig{Denylist: []string{"network"}, NetworkInterface: "eth9"},
			wantError: `"eth9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp, err := fingerprintHost(fullSources(), tc.cfg)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.present {
				if fp.Attributes[k] == "" {
					t.Errorf("%s missing", k)
				}
			}
			for _, k := range tc.absent {
				if v, ok := fp.Attributes[k]; ok {
					t.Errorf("%s = %q, want it left out", k, v)
				}
			}
			// Resources are measured whatever the lists say.
			if fp.Resources.Cpu.CpuShares != 4000 || fp.Resources.Memory.MemoryMB != 1 {
				t.Errorf("resources = %+v", fp.Resources)
			}
		})
	}
	if got := (&FingerprintConfig{Allowlist: []string{"cpu", "env_gce"}, Denylist: []string{"netwrok"}}).UnknownFingerprinters(); !reflect.DeepEqual(got, []string{"netwrok"}) {
		t.Errorf("unknown fingerprinters = %v", got)
	}
}

func TestFingerprintHostOverrides(t *testing.T) {
	fp, err := fingerprintHost(fullSources(), FingerprintConfig{CPUTotalCompute: 9000, MemoryTotalMB: 2048, DiskTotalMB: 500, DiskFreeMB: 300})
	if err != nil {
		t.Fatal(err)
	}
	r := fp.Resources
	if r.Cpu.CpuShares != 9000 || r.Memory.MemoryMB != 2048 || r.Disk.DiskMB != 300 {
		t.Errorf("resources = %+v", r)
	}
	a := fp.Attributes
	if a["cpu.totalcompute"] != "9000" || a["memory.totalbytes"] != "2147483648" || a["unique.storage.bytestotal"] != "524288000" || a["unique.storage.bytesfree"] != "314572800" {
		t.Errorf("attributes = %v", a)
	}
}

// TestFingerprintThisHost runs the real fingerprint of this machine.
func TestFingerprintThisHost(t *testing.T) {
	cfg := &Config{AllocDir: t.TempDir(), HTTPAddr: "127.0.0.1:4646"}
	fp, err := fingerprintHost(gatherHostSources(cfg, FingerprintConfig{}), FingerprintConfig{})
	if err != nil {
		t.Fatal(err)
	}
	a := fp.Attributes
	t.Logf("attributes: %v", a)
	for _, k := range []string{"cpu.arch", "cpu.numcores", "cpu.totalcompute", "memory.totalbytes", "kernel.name", "kernel.version",
		"kernel.arch", "unique.hostname", "os.signals", "nomad.version", "drover.version", "unique.advertise.address",
		"unique.storage.volume", "unique.storage.bytestotal"} {
		if a[k] == "" {
			t.Errorf("%s is empty", k)
		}
	}
	if !strings.Contains(a["os.signals"], "SIGHUP") || a["kernel.name"] != "linux" {
		t.Errorf("os.signals %q kernel.name %q", a["os.signals"], a["kernel.name"])
	}
	if _, err := os.Stat("/etc/os-release"); err == nil && a["os.name"] == "" {
		t.Error("os.name is empty although /etc/os-release exists")
	}
	if ip := a["unique.network.ip-address"]; ip != "" && net.ParseIP(ip) == nil {
		t.Errorf("unique.network.ip-address = %q is not an IP", ip)
	}
	lo, err := fingerprintHost(gatherHostSources(cfg, FingerprintConfig{NetworkInterface: "lo"}), FingerprintConfig{NetworkInterface: "lo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := lo.Attributes["unique.network.ip-address"]; got != "127.0.0.1" {
		t.Errorf("-network-interface lo: ip-address %q", got)
	}
	if _, err := fingerprintHost(gatherHostSources(cfg, FingerprintConfig{NetworkInterface: "no-such0"}), FingerprintConfig{NetworkInterface: "no-such0"}); err == nil {
		t.Error("a missing interface is not an error")
	}
}
