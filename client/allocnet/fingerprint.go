package allocnet

import (
	"context"
	"os"
	"slices"
	"strings"

	"github.com/containernetworking/cni/libcni"
)

// Node attributes the fingerprint sets, as Nomad names them: a plugin
// found in the plugin dirs gives "plugins.cni.version.<plugin>" (the
// highest CNI specification version it supports), a network of the config
// dir "plugins.cni.config.<name>" ("true"). The scheduler places bridge and
// CNI groups only on nodes that have them.
const (
	PluginAttrPrefix = "plugins.cni.version."
	ConfigAttrPrefix = "plugins.cni.config."
)

// Fingerprint returns the CNI attributes of the node: each plugin of
// pluginDirs that answers CNI's VERSION command (the first dir that has a
// name wins), and each network configured in configDir.
func Fingerprint(ctx context.Context, pluginDirs []string, configDir string) map[string]string {
	attrs := map[string]string{}
	cni := libcni.NewCNIConfig(pluginDirs, nil)
	seen := map[string]bool{}
	for _, dir := range pluginDirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if seen[name] || e.IsDir() {
				continue
			}
			info, err := e.Info()
			if err != nil || info.Mode()&0o111 == 0 {
				continue
			}
			seen[name] = true
			vi, err := cni.GetVersionInfo(ctx, name)
			if err != nil {
				continue // not a CNI plugin
			}
			versions := vi.SupportedVersions()
			if len(versions) == 0 {
				continue
			}
			slices.SortFunc(versions, compareVersions)
			attrs[PluginAttrPrefix+name] = versions[len(versions)-1]
		}
	}
	files, _ := libcni.ConfFiles(configDir, []string{".conf", ".conflist", ".json"})
	for _, f := range files {
		var name string
		if strings.HasSuffix(f, ".conflist") {
			if l, err := libcni.ConfListFromFile(f); err == nil {
				name = l.Name
			}
		} else if c, err := libcni.ConfFromFile(f); err == nil {
			name = c.Network.Name
		}
		if name != "" {
			attrs[ConfigAttrPrefix+name] = "true"
		}
	}
	return attrs
}

// compareVersions orders dotted versions numerically ("0.4.0" < "1.0.0").
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y string
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		if len(x) != len(y) {
			return len(x) - len(y)
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}
