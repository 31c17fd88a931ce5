package structs

// Network modes of a group (TaskGroup.Networks[i].Mode).
const (
	// NetworkModeHost shares the node's network with the group's tasks:
	// the default.
	NetworkModeHost = "host"
	// NetworkModeNone gives each task a network namespace of its own
	// with only a loopback device (exec), or the driver's equivalent.
	NetworkModeNone = "none"
)

// NetworkResource is a group's network block. Only the mode is
// implemented; ports are not allocated yet.
type NetworkResource struct {
	// Mode is NetworkModeHost or NetworkModeNone; "" (the block sets no
	// mode) means host, though a driver may tell it from an explicit
	// "host" (docker then keeps its own default network).
	Mode string
}

// Copy returns a copy of n.
func (n *NetworkResource) Copy() *NetworkResource {
	if n == nil {
		return nil
	}
	c := *n
	return &c
}
