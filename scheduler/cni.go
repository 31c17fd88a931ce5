package scheduler

import (
	"strings"

	"github.com/drover-io/drover/structs"
)

// Bridge and CNI networks need the client's CNI plugins: the client
// fingerprints each plugin it finds in its cni_path as the attribute
// "plugins.cni.version.<plugin>" and each network of its cni_config_dir as
// "plugins.cni.config.<name>". A group in mode "bridge" needs the plugins
// of the client's bridge network; one in "cni/<name>" needs that network.
// A node without them is filtered with the missing attribute as reason:
// `missing CNI plugin "bridge" (attribute plugins.cni.version.bridge)`.
const (
	cniPluginAttrPrefix = "plugins.cni.version."
	cniConfigAttrPrefix = "plugins.cni.config."
)

// bridgePlugins are the plugins of the client's generated bridge network.
var bridgePlugins = [...]string{"bridge", "host-local", "loopback", "portmap", "firewall"}

// cniBlock returns why node cannot give group tg its network mode, as the
// ConstraintFiltered key of the placement metric, or "" when it can.
func cniBlock(node *structs.Node, tg *structs.TaskGroup) string {
	if len(tg.Networks) == 0 || tg.Networks[0] == nil {
		return ""
	}
	mode := tg.Networks[0].Mode
	switch {
	case mode == structs.NetworkModeBridge:
		for _, p := range bridgePlugins {
			if node.Attributes[cniPluginAttrPrefix+p] == "" {
				return "missing CNI plugin " + p + " (attribute " + cniPluginAttrPrefix + p + ")"
			}
		}
	case strings.HasPrefix(mode, structs.NetworkModeCNIPrefix):
		name := strings.TrimPrefix(mode, structs.NetworkModeCNIPrefix)
		if node.Attributes[cniConfigAttrPrefix+name] == "" {
			return "missing CNI network " + name + " (attribute " + cniConfigAttrPrefix + name + ")"
		}
	}
	return ""
}
