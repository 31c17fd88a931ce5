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
// up; in "host" mode (and without a mode) it sees the host's interfaces.
func TestTaskNetworkMode(t *testing.T) {
	h := newHarness(t)
	host := strings.Join(hostInterfaces(t), "\n")
	// /proc/net/dev lists the interfaces of the reader's network
	// namespace; 127.0.0.1 is in the local routing table only while lo
	// is up.
	const script = `grep : /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort; grep -q 127.0.0.1 /proc/net/fib_trie && echo lo-up`
	cases := []struct {
		mode string
		want string
	}{
		{"none", "lo\nlo-up"},
		{"host", host + "\nlo-up"},
		{"", host + "\nlo-up"},
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
			if got := strings.TrimSpace(stdout(t, cfg)); got != tc.want {
				t.Fatalf("stdout %q, want %q (stderr %q)", got, tc.want, stderr(t, cfg))
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

// hostInterfaces returns the names of the host's network interfaces,
// sorted, as /proc/net/dev lists them.
func hostInterfaces(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok {
			names = append(names, strings.TrimSpace(name))
		}
	}
	slices.Sort(names)
	if len(names) < 2 {
		t.Skipf("the host has only %v: host and none modes look alike", names)
	}
	return names
}
