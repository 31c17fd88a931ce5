package agent

import (
	"path/filepath"

	"github.com/drover-io/drover/client/allocnet"
)

// networkConfig is the client's bridge and CNI networking: cni_path (by
// default /opt/cni/bin, or Debian's /usr/lib/cni when only that has the
// plugins), cni_config_dir, bridge_network_name, bridge_network_subnet
// and bridge_network_subnet_ipv6 (Nomad's defaults: IPv4 only). The
// namespaces and libcni's cache live in the data
// dir (the dev mode's temporary dir without one).
func (a *Agent) networkConfig() *allocnet.Config {
	base := a.cfg.DataDir
	if base == "" {
		base = a.tempDir
	}
	if base == "" {
		base = filepath.Dir(a.allocDir)
	}
	cl := a.cfg.Client
	return &allocnet.Config{
		PluginDirs: allocnet.PluginDirs(cl.CNIPath),
		ConfigDir:  cl.CNIConfigDir,
		BridgeName: cl.BridgeNetworkName,
		Subnet:     cl.BridgeNetworkSubnet,
		SubnetIPv6: cl.BridgeNetworkSubnetIPv6,
		NetnsDir:   filepath.Join(base, "netns"),
		CacheDir:   filepath.Join(base, "cni-cache"),
	}
}
