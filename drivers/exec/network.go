package exec

import (
	"fmt"
	"strings"

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
