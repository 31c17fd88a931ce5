package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// Network modes of a task's group, as in drivers.TaskConfig.NetworkMode
// (the values of structs.NetworkModeHost and structs.NetworkModeNone).
const (
	networkModeHost = "host"
	networkModeNone = "none"
)

// networkIsolation reports whether a task of a group in network mode
// gets a network namespace of its own: "none" does (only loopback, up);
// "host" and "" (a client that predates network modes) share the host's
// network. "bridge" and "cni/<name>" join the allocation's namespace that
// the client made (netns, the shim's NetNSPath); without one they are
// refused, as other modes are: the task would run with a network it did
// not ask for.
func networkIsolation(mode string, alloc *drivers.NetworkIsolationSpec) (own bool, netns string, err error) {
	switch {
	case mode == "" || mode == networkModeHost:
		return false, "", nil
	case mode == networkModeNone:
		return true, "", nil
	case mode == "bridge" || strings.HasPrefix(mode, "cni/"):
		if alloc == nil || alloc.Path == "" {
			return false, "", fmt.Errorf("network mode %q: the client gave the task no network namespace to join", mode)
		}
		return false, alloc.Path, nil
	default:
		return false, "", fmt.Errorf("network mode %q is not supported by the exec driver: use %q, %q, \"bridge\" or \"cni/<name>\"", mode, networkModeHost, networkModeNone)
	}
}

// namespaceSettings are what a task in the allocation's namespace (spec;
// nil: none) takes of its group's network block: the hostname (of the
// task's own UTS namespace) and, with a dns block, a resolv.conf written
// in stateDir and bound read-only over the task's /etc/resolv.conf.
func namespaceSettings(spec *drivers.NetworkIsolationSpec, stateDir string) (hostname string, mounts []isolation.Mount, err error) {
	if spec == nil || spec.Path == "" {
		return "", nil, nil
	}
	if spec.DNS == nil {
		return spec.Hostname, nil, nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", nil, fmt.Errorf("network dns: %w", err)
	}
	path := filepath.Join(stateDir, "resolv.conf")
	if err := os.WriteFile(path, resolvConf(spec.DNS), 0o644); err != nil {
		return "", nil, fmt.Errorf("network dns: write resolv.conf: %w", err)
	}
	return spec.Hostname, []isolation.Mount{{Source: path, Target: "/etc/resolv.conf", ReadOnly: true}}, nil
}

// resolvConf renders a dns block as resolv.conf(5).
func resolvConf(d *drivers.DNSConfig) []byte {
	var b strings.Builder
	for _, s := range d.Servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(d.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(d.Searches, " "))
	}
	if len(d.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(d.Options, " "))
	}
	return []byte(b.String())
}
