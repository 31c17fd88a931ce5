package exec

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestNetworkIsolation(t *testing.T) {
	ns := &drivers.NetworkIsolationSpec{Path: "/run/drover/netns/a", IP: "172.26.64.2"}
	cases := []struct {
		mode      string
		alloc     *drivers.NetworkIsolationSpec
		want      bool
		wantNetns string
		wantErr   string
	}{
		{mode: "", want: false},
		{mode: "host", want: false},
		{mode: "none", want: true},
		{mode: "bridge", alloc: ns, wantNetns: ns.Path},
		{mode: "cni/x", alloc: ns, wantNetns: ns.Path},
		{mode: "bridge", wantErr: `network mode "bridge": the client gave the task no network namespace`},
		{mode: "cni/x", wantErr: `network mode "cni/x": the client gave the task no network namespace`},
		{mode: "weird", wantErr: `network mode "weird" is not supported by the exec driver`},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			got, netns, err := networkIsolation(tc.mode, tc.alloc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || netns != tc.wantNetns {
				t.Fatalf("networkIsolation(%q) = %v, %q, %v; want %v, %q", tc.mode, got, netns, err, tc.want, tc.wantNetns)
			}
		})
	}
}

// A task of a group in network mode "none" sees only its own loopback,
// up, in a network namespace of its own; in "host" mode (and without a
// mode) it is in the host's network namespace. (The host's interfaces
// are not compared: other tasks' veths come and go meanwhile.)
func TestTaskNetworkMode(t *testing.T) {
	h := newHarness(t)
	hostNS, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	// /proc/net/dev lists the interfaces of the reader's network
	// namespace; 127.0.0.1 is in the local routing table only while lo
	// is up.
	const script = `readlink /proc/self/ns/net; grep : /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort; grep -q 127.0.0.1 /proc/net/fib_trie && echo lo-up`
	cases := []struct {
		mode   string
		hostNS bool
	}{
		{"none", false},
		{"host", true},
		{"", true},
	}
	for _, tc := range cases {
		t.Run("mode "+tc.mode, func(t *testing.T) {
			h := &harness{t: t, d: h.d}
			cfg := h.sh(script)
			cfg.NetworkMode = tc.mode
			h.start(cfg)
			res := h.wait(cfg.ID)
			if !res.Successful() {
				t.Fatalf("exit %+v; stderr %q", res, stderr(t, cfg))
			}
			out := strings.TrimSpace(stdout(t, cfg))
			ns, ifaces, _ := strings.Cut(out, "\n")
			if (ns == hostNS) != tc.hostNS {
				t.Fatalf("task's network namespace %q, host's %q: want the host's %v", ns, hostNS, tc.hostNS)
			}
			lines := strings.Split(ifaces, "\n")
			if !slices.Contains(lines, "lo") || !slices.Contains(lines, "lo-up") {
				t.Fatalf("interfaces %q, want lo, up (stderr %q)", ifaces, stderr(t, cfg))
			}
			if !tc.hostNS && ifaces != "lo\nlo-up" {
				t.Fatalf("interfaces %q, want only lo, up", ifaces)
			}
		})
	}
}

// A task of a group in bridge mode runs in the allocation's network
// namespace that the client made (here one the test makes, with a veth pair
// interface to tell it by), not in one of its own nor in the host's.
func TestTaskJoinsAllocNetns(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip to make a network namespace")
	}
	h := newHarness(t)
	name := fmt.Sprintf("drover-exec-test-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "-n", name, "link", "add", "marker0", "type", "veth", "peer", "name", "marker1").CombinedOutput(); err != nil {
		t.Fatalf("add a veth pair: %v: %s", err, out)
	}
	cfg := h.sh(`grep : /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort`)
	cfg.NetworkMode = "bridge"
	cfg.NetworkIsolation = &drivers.NetworkIsolationSpec{Path: "/run/netns/" + name, IP: "172.26.64.2"}
	h.start(cfg)
	res := h.wait(cfg.ID)
	if !res.Successful() {
		t.Fatalf("exit %+v; stderr %q", res, stderr(t, cfg))
	}
	if got := strings.TrimSpace(stdout(t, cfg)); got != "lo\nmarker0\nmarker1" {
		t.Fatalf("the task sees interfaces %q, want the namespace's lo, marker0 and marker1", got)
	}
}

// A task in the allocation's namespace takes its group's hostname (in
// its own UTS namespace) and dns block (its /etc/resolv.conf); the host's
// hostname and resolv.conf are left alone.
func TestTaskGroupHostnameAndDNS(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip to make a network namespace")
	}
	h := newHarness(t)
	name := fmt.Sprintf("drover-exec-dns-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	hostResolv, _ := os.ReadFile("/etc/resolv.conf")
	hostName, _ := os.Hostname()
	cfg := h.sh(`hostname; cat /etc/resolv.conf`)
	cfg.NetworkMode = "bridge"
	cfg.NetworkIsolation = &drivers.NetworkIsolationSpec{Path: "/run/netns/" + name, Hostname: "web-1",
		DNS: &drivers.DNSConfig{Servers: []string{"10.9.8.7"}, Searches: []string{"drover.test"}, Options: []string{"ndots:2"}}}
	h.start(cfg)
	res := h.wait(cfg.ID)
	if !res.Successful() {
		t.Fatalf("exit %+v; stderr %q", res, stderr(t, cfg))
	}
	want := "web-1\nnameserver 10.9.8.7\nsearch drover.test\noptions ndots:2\n"
	if got := stdout(t, cfg); got != want {
		t.Fatalf("task output %q, want %q", got, want)
	}
	if after, _ := os.ReadFile("/etc/resolv.conf"); string(after) != string(hostResolv) {
		t.Fatal("the host's resolv.conf changed")
	}
	if after, _ := os.Hostname(); after != hostName {
		t.Fatalf("the host's hostname changed to %q", after)
	}
}

// resolvConf writes only the lines a dns block sets.
func TestResolvConf(t *testing.T) {
	cases := []struct {
		dns  drivers.DNSConfig
		want string
	}{
		{drivers.DNSConfig{Servers: []string{"1.1.1.1", "fd00::1"}}, "nameserver 1.1.1.1\nnameserver fd00::1\n"},
		{drivers.DNSConfig{Searches: []string{"a", "b"}, Options: []string{"ndots:1", "rotate"}}, "search a b\noptions ndots:1 rotate\n"},
		{drivers.DNSConfig{}, ""},
	}
	for _, tc := range cases {
		if got := string(resolvConf(&tc.dns)); got != tc.want {
			t.Errorf("resolvConf(%+v) = %q, want %q", tc.dns, got, tc.want)
		}
	}
}
