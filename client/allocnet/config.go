package allocnet

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// Defaults of the client's bridge network (Nomad's).
const (
	DefaultBridgeName = "nomad"
	DefaultSubnet     = "172.26.64.0/20"
	// DefaultPluginDir is where the agent looks for CNI plugins by default.
	DefaultPluginDir = "/opt/cni/bin"
	// DebianPluginDir is where Debian's containernetworking-plugins puts
	// them; the agent falls back to it when cni_path is not set and
	// DefaultPluginDir has no bridge plugin.
	DebianPluginDir = "/usr/lib/cni"
	// DefaultConfigDir holds operators' CNI network configs.
	DefaultConfigDir = "/opt/cni/config"
	// adminChain is the iptables chain the firewall plugin creates for
	// the operator's own rules.
	adminChain = "DROVER-ADMIN"
	// ifName is the allocation's interface in its namespace.
	ifName = "eth0"
)

// Config configures the Manager.
type Config struct {
	// PluginDirs are searched for CNI plugin binaries, in order.
	PluginDirs []string
	// ConfigDir holds the operator's conflists ("cni/<name>" modes).
	ConfigDir string
	// BridgeName names the bridge interface and the generated network;
	// Subnet is the bridge network's IPv4 subnet (host-local IPAM), and
	// SubnetIPv6 its IPv6 one ("": IPv4 only).
	BridgeName string
	Subnet     string
	SubnetIPv6 string
	// NetnsDir holds the namespaces' bind mounts and records; CacheDir is
	// libcni's result cache. Both are the agent's own (under data_dir).
	NetnsDir string
	CacheDir string
}

// PluginDirs returns the plugin directories of a client's cni_path
// (colon-separated): when it is empty, DefaultPluginDir, or
// DebianPluginDir when only that one has the bridge plugin.
func PluginDirs(cniPath string) []string {
	if cniPath != "" {
		return filepath.SplitList(cniPath)
	}
	if !exists(filepath.Join(DefaultPluginDir, "bridge")) && exists(filepath.Join(DebianPluginDir, "bridge")) {
		return []string{DebianPluginDir}
	}
	return []string{DefaultPluginDir}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// withDefaults returns c with defaults filled in, or an error naming a
// bad field.
func (c Config) withDefaults() (Config, error) {
	if c.BridgeName == "" {
		c.BridgeName = DefaultBridgeName
	}
	if c.Subnet == "" {
		c.Subnet = DefaultSubnet
	}
	if c.ConfigDir == "" {
		c.ConfigDir = DefaultConfigDir
	}
	if len(c.PluginDirs) == 0 {
		c.PluginDirs = PluginDirs("")
	}
	if c.NetnsDir == "" || c.CacheDir == "" {
		return c, fmt.Errorf("allocnet: netns and cache dirs are required")
	}
	if p, err := netip.ParsePrefix(c.Subnet); err != nil || !p.Addr().Is4() {
		return c, fmt.Errorf("client bridge_network_subnet %q: want an IPv4 CIDR such as %s", c.Subnet, DefaultSubnet)
	}
	if c.SubnetIPv6 != "" {
		if p, err := netip.ParsePrefix(c.SubnetIPv6); err != nil || !p.Addr().Is6() || p.Addr().Is4In6() {
			return c, fmt.Errorf("client bridge_network_subnet_ipv6 %q: want an IPv6 CIDR such as fd00:a110:c8::/64", c.SubnetIPv6)
		}
	}
	if len(c.BridgeName) > 15 || strings.ContainsAny(c.BridgeName, "/ \t\n") {
		return c, fmt.Errorf("client bridge_network_name %q: want an interface name of at most 15 characters", c.BridgeName)
	}
	return c, nil
}

// bridgeConfList is the client's bridge network as a CNI conflist.
func (c Config) bridgeConfList() ([]byte, error) {
	type m = map[string]any
	ranges := [][]m{{{"subnet": c.Subnet}}}
	routes := []m{{"dst": "0.0.0.0/0"}}
	if c.SubnetIPv6 != "" {
		ranges = append(ranges, []m{{"subnet": c.SubnetIPv6}})
		routes = append(routes, m{"dst": "::/0"})
	}
	list := m{
		"cniVersion": "1.0.0",
		"name":       c.BridgeName,
		"plugins": []m{
			{"type": "loopback"},
			{
				"type":         "bridge",
				"bridge":       c.BridgeName,
				"ipMasq":       true,
				"isGateway":    true,
				"forceAddress": true,
				"hairpinMode":  true,
				"ipam": m{
					"type":   "host-local",
					"ranges": ranges,
					"routes": routes,
				},
			},
			{"type": "firewall", "backend": "iptables", "iptablesAdminChainName": adminChain},
			{"type": "portmap", "capabilities": m{"portMappings": true}, "snat": true},
		},
	}
	return json.Marshal(list)
}
