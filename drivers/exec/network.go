package exec

import "fmt"

// Network modes of a task's group, as in drivers.TaskConfig.NetworkMode
// (the values of structs.NetworkModeHost and structs.NetworkModeNone).
const (
	networkModeHost = "host"
	networkModeNone = "none"
)

// networkIsolation reports whether a task of a group in network mode
// gets a network namespace of its own: "none" does (only loopback, up);
// "host" and "" (a client that predates network modes) share the host's
// network. Other modes are refused: the task would run with a network it
// did not ask for.
func networkIsolation(mode string) (bool, error) {
	switch mode {
	case "", networkModeHost:
		return false, nil
	case networkModeNone:
		return true, nil
	default:
		return false, fmt.Errorf("network mode %q is not supported by the exec driver: use %q or %q", mode, networkModeHost, networkModeNone)
	}
}
