package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// The client's bridge network keys reach the allocation network config,
// bridge_network_subnet_ipv6 among them.
func TestConfigBridgeNetworkKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.hcl")
	hcl := `client {
  enabled                    = true
  cni_config_dir             = "/etc/cni/net.d"
  bridge_network_name        = "drover0"
  bridge_network_subnet      = "10.77.0.0/16"
  bridge_network_subnet_ipv6 = "fd00:77::/64"
}
`
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	c := loadFiles(t, DefaultConfig(), path)
	a := &Agent{cfg: c, allocDir: filepath.Join(t.TempDir(), "alloc")}
	got := a.networkConfig()
	if got.ConfigDir != "/etc/cni/net.d" || got.BridgeName != "drover0" || got.Subnet != "10.77.0.0/16" || got.SubnetIPv6 != "fd00:77::/64" {
		t.Fatalf("network config %+v", got)
	}
}
