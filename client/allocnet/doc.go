// Package allocnet gives an allocation in network mode "bridge" or
// "cni/<name>" a network namespace of its own, wired with CNI.
//
// Where it sits in the data flow: the alloc runner's network hook
// (client/allocrunner) calls Manager.Setup before any task starts and
// Manager.Teardown when the allocation is destroyed; the Status it gets
// back (the namespace's path and the allocation's address) goes to every
// task's driver as drivers.TaskConfig.NetworkIsolation, and the tasks
// join the namespace (the shim starts them from a thread that entered it;
// see drivers/shared/shim).
//
// A namespace is a bind mount of a thread's network namespace (or of one
// a driver made, Request.Source: docker's infra container) on a file of
// NetnsDir named after the allocation; beside it, "<alloc id>.json"
// records the mode and ports it was wired with, so that a teardown (or a
// Sweep after a crash) can undo the wiring without the allocation. CNI is
// driven through libcni (github.com/containernetworking/cni) with the
// plugin binaries of PluginDirs: mode "bridge" uses a conflist generated
// from Config (loopback, bridge with host-local IPAM, firewall, portmap:
// the group's ports published on the host), "cni/<name>" the operator's
// conflist named <name> in ConfigDir, with the same port mappings.
//
// Setup is idempotent: a namespace already there with a CNI result in the
// cache (an agent restart) is kept as it is and its status returned, so
// running tasks keep their network. Teardown is idempotent too: CNI DEL
// (which the plugins accept for a namespace already gone), then the
// mount and the files are removed. Sweep tears down what belongs to no
// allocation the agent knows (left by a crash while an allocation was
// being destroyed).
package allocnet
