package client

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestNodeNetworks(t *testing.T) {
	ifaces := []netInterface{
		{Name: "lo", Up: true, Loopback: true, Prefixes: prefixes("127.0.0.1/8", "::1/128")},
		{Name: "eth0", Up: true, MAC: "02:00:00:00:00:01", Prefixes: prefixes("fe80::1/64", "10.0.0.5/24", "2001:db8::5/64")},
		{Name: "tailscale0", Up: true, Prefixes: prefixes("100.64.0.7/32")},
		{Name: "down0", Up: false, Prefixes: prefixes("10.9.9.9/24")},
	}
	hns := []*structs.ClientHostNetworkConfig{
		{Name: "private", CIDR: "10.0.0.0/8", ReservedPorts: "22"},
		{Name: "vpn", Interface: "tailscale0"},
		{Name: "v6", Interface: "eth0", CIDR: "2001:db8::/32"},
	}
	nets, legacy, warnings, err := nodeNetworks(ifaces, "10.0.0.5", hns)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{} // device -> "alias=address"
	for _, n := range nets {
		for _, a := range n.Addresses {
			got[n.Device] = append(got[n.Device], a.Alias+"="+a.Address+"/"+a.Family+"/"+a.ReservedPorts)
		}
	}
	want := map[string][]string{
		"eth0":       {"default=10.0.0.5/ipv4/", "private=10.0.0.5/ipv4/22", "v6=2001:db8::5/ipv6/"},
		"tailscale0": {"vpn=100.64.0.7/ipv4/"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("addresses = %v, want %v", got, want)
	}
	if nets[0].Device != "eth0" || nets[0].MacAddress != "02:00:00:00:00:01" || nets[0].Mode != "host" {
		t.Errorf("first interface = %+v", nets[0])
	}
	if len(legacy) != 1 || !reflect.DeepEqual(*legacy[0], structs.NetworkResource{Mode: "host", Device: "eth0", CIDR: "10.0.0.5/32", IP: "10.0.0.5", MBits: 1000}) {
		t.Errorf("legacy networks = %+v", legacy)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestNodeNetworksLoopbackDefault(t *testing.T) {
	// Dev mode: the loopback interface is the node's network.
	nets, _, _, err := nodeNetworks([]netInterface{{Name: "lo", Up: true, Loopback: true, Addrs: addrs("127.0.0.1")}}, "127.0.0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(nets) != 1 || len(nets[0].Addresses) != 1 || nets[0].Addresses[0].Alias != "default" || nets[0].Addresses[0].Address != "127.0.0.1" {
		t.Fatalf("networks = %+v", nets)
	}
}

func TestNodeNetworksBadHostNetwork(t *testing.T) {
	ifaces := []netInterface{{Name: "eth0", Up: true, Prefixes: prefixes("10.0.0.5/24")}}
	cases := []struct {
		hn      structs.ClientHostNetworkConfig
		wantErr string
		warn    string
	}{
		{hn: structs.ClientHostNetworkConfig{Name: "x", CIDR: "10.0.0.0"}, wantErr: `host_network "x": cidr "10.0.0.0" is not a network`},
		{hn: structs.ClientHostNetworkConfig{Name: "x", Interface: `{{ GetDefaultInterfaces | attr "name" }}`}, wantErr: "templates are not supported"},
		{hn: structs.ClientHostNetworkConfig{Name: "x", Interface: "eth0", ReservedPorts: "80-70"}, wantErr: `host_network "x": reserved_ports`},
		{hn: structs.ClientHostNetworkConfig{Name: "x", CIDR: "192.168.0.0/16"}, warn: `host_network "x" matches no address`},
		{hn: structs.ClientHostNetworkConfig{Name: "x", Interface: "eth9"}, warn: `host_network "x" matches no address`},
	}
	for _, tc := range cases {
		hn := tc.hn
		_, _, warnings, err := nodeNetworks(ifaces, "10.0.0.5", []*structs.ClientHostNetworkConfig{&hn})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%+v: err = %v, want %q", tc.hn, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], tc.warn) {
			t.Errorf("%+v: warnings = %q, %v; want %q", tc.hn, warnings, err, tc.warn)
		}
	}
}

// The host fingerprint carries the interfaces, the dynamic range is set
// on the node, and a denied network fingerprinter reports no interfaces.
func TestFingerprintHostNetworks(t *testing.T) {
	src := hostSources{Interfaces: []netInterface{{Name: "eth0", Up: true, Prefixes: prefixes("10.0.0.5/24")}}, DefaultIface: "eth0"}
	fp, err := fingerprintHost(src, FingerprintConfig{HostNetworks: []*structs.ClientHostNetworkConfig{{Name: "lan", CIDR: "10.0.0.0/24"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fp.Resources.NodeNetworks) != 1 || len(fp.Resources.NodeNetworks[0].Addresses) != 2 || fp.Resources.Networks[0].IP != "10.0.0.5" {
		t.Errorf("node networks = %+v / %+v", fp.Resources.NodeNetworks, fp.Resources.Networks)
	}
	fp, err = fingerprintHost(src, FingerprintConfig{Denylist: []string{"network"}})
	if err != nil || fp.Resources.NodeNetworks != nil {
		t.Errorf("denied network fingerprinter: %+v, %v", fp.Resources.NodeNetworks, err)
	}
	r := &structs.NodeResources{}
	setNodePorts(r, &Config{})
	if r.MinDynamicPort != 20000 || r.MaxDynamicPort != 32000 {
		t.Errorf("default range = %d-%d", r.MinDynamicPort, r.MaxDynamicPort)
	}
	setNodePorts(r, &Config{MinDynamicPort: 30000, MaxDynamicPort: 30100})
	if r.MinDynamicPort != 30000 || r.MaxDynamicPort != 30100 {
		t.Errorf("configured range = %d-%d", r.MinDynamicPort, r.MaxDynamicPort)
	}
}
