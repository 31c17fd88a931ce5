package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/drover-io/drover/client/allocnet"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

var (
	_ prerunHook  = (*networkHook)(nil)
	_ postrunHook = (*networkHook)(nil)
	_ destroyHook = (*networkHook)(nil)
)

// NetworkManager makes and removes allocations' network namespaces
// (allocnet.Manager). Setup must keep a namespace already made (an agent
// restart); Teardown must be idempotent.
type NetworkManager interface {
	Setup(ctx context.Context, req *allocnet.Request) (*allocnet.Status, error)
	Teardown(ctx context.Context, allocID string) error
}

// networkHook gives an allocation in network mode "bridge" or
// "cni/<name>" its network namespace before any task starts (also after
// an agent restart, when the namespace is kept as it is), and removes it
// once every task is dead and when the allocation is destroyed. Other
// modes are no business of it.
//
// When a task's driver must make the namespace itself
// (Capabilities.MustInitiateNetwork: docker, whose containers can join
// only another container's network), that driver makes it
// (drivers.DriverNetworkManager: an infra container) and the manager
// wires it; otherwise the manager makes it. Either way every task of the
// group joins the one namespace.
type networkHook struct {
	manager NetworkManager // nil: the client has no CNI networking
	drivers DriverGetter   // nil: no driver makes namespaces
	logger  *slog.Logger

	mu     sync.Mutex // guards the fields below
	status *allocnet.Status
	// labels are the namespace maker's (NetworkIsolationSpec.Labels);
	// network is the group's block the namespace was made for.
	labels  map[string]string
	network *structs.NetworkResource
}

// Name returns "network".
func (*networkHook) Name() string { return "network" }

// groupNetwork returns the network block of alloc's group; nil: none.
func groupNetwork(alloc *structs.Allocation) *structs.NetworkResource {
	if alloc == nil || alloc.Job == nil {
		return nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil || len(tg.Networks) == 0 {
		return nil
	}
	return tg.Networks[0]
}

// groupNetworkMode returns the network mode alloc's group sets.
func groupNetworkMode(alloc *structs.Allocation) string {
	if n := groupNetwork(alloc); n != nil {
		return n.Mode
	}
	return ""
}

// networkMaker returns the driver of alloc's group that makes the
// namespace (the first task's whose driver says so), or nil.
func (h *networkHook) networkMaker(alloc *structs.Allocation) (drivers.DriverNetworkManager, string, error) {
	if h.drivers == nil || alloc.Job == nil {
		return nil, "", nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil, "", nil
	}
	seen := map[string]bool{}
	for _, t := range tg.Tasks {
		if seen[t.Driver] {
			continue
		}
		seen[t.Driver] = true
		d, err := h.drivers(t.Driver)
		if err != nil {
			return nil, "", fmt.Errorf("task %q: %w", t.Name, err)
		}
		if caps := d.Capabilities(); caps == nil || !caps.MustInitiateNetwork {
			continue
		}
		nm, ok := d.(drivers.DriverNetworkManager)
		if !ok {
			return nil, "", fmt.Errorf("task %q: the %s driver must make the group's network namespace but cannot: %w", t.Name, t.Driver, drivers.ErrNotSupported)
		}
		return nm, t.Driver, nil
	}
	return nil, "", nil
}

// cniArgs are the CNI_ARGS of alloc's network: IgnoreUnknown (so plugins
// that know none of them accept them), the allocation's identity as Nomad
// passes it (NOMAD_REGION, NOMAD_NAMESPACE, NOMAD_JOB_ID,
// NOMAD_GROUP_NAME, NOMAD_ALLOC_ID; one whose value holds a ';', which
// CNI_ARGS cannot carry, is left out), then the group's cni { args },
// which win.
func cniArgs(alloc *structs.Allocation, n *structs.NetworkResource) map[string]string {
	args := map[string]string{
		"IgnoreUnknown":    "1",
		"NOMAD_NAMESPACE":  alloc.Namespace,
		"NOMAD_JOB_ID":     alloc.JobID,
		"NOMAD_GROUP_NAME": alloc.TaskGroup,
		"NOMAD_ALLOC_ID":   alloc.ID,
	}
	if alloc.Job != nil {
		args["NOMAD_REGION"] = alloc.Job.Region
	}
	maps.DeleteFunc(args, func(_, v string) bool { return v == "" || strings.Contains(v, ";") })
	if n != nil && n.CNI != nil {
		maps.Copy(args, n.CNI.Args)
	}
	return args
}

// Prerun makes and wires the namespace.
func (h *networkHook) Prerun(ctx context.Context, req *PrerunRequest, resp *PrerunResponse) error {
	mode := groupNetworkMode(req.Alloc)
	if !allocnet.Supported(mode) {
		return nil
	}
	if h.manager == nil {
		return fmt.Errorf("network mode %q: this client has no CNI networking configured", mode)
	}
	n := groupNetwork(req.Alloc)
	netReq := &allocnet.Request{AllocID: req.Alloc.ID, Mode: mode, Args: cniArgs(req.Alloc, n)}
	if ar := req.Alloc.AllocatedResources; ar != nil {
		for _, p := range ar.Shared.Ports {
			netReq.Ports = append(netReq.Ports, allocnet.Port{HostIP: p.HostIP, HostPort: p.Value, ContainerPort: p.To})
		}
	}
	maker, driver, err := h.networkMaker(req.Alloc)
	if err != nil {
		return fmt.Errorf("network mode %q: %w", mode, err)
	}
	var labels map[string]string
	if maker != nil {
		spec, err := maker.CreateNetwork(ctx, &drivers.CreateNetworkRequest{AllocID: req.Alloc.ID, NodeID: req.Alloc.NodeID, Hostname: n.Hostname, DNS: driverDNS(n.DNS)})
		if err != nil {
			return fmt.Errorf("network mode %q: the %s driver: %w", mode, driver, err)
		}
		netReq.Source, labels = spec.Path, spec.Labels
	}
	st, err := h.manager.Setup(ctx, netReq)
	if err != nil {
		if maker != nil {
			err = errors.Join(err, maker.DestroyNetwork(context.WithoutCancel(ctx), req.Alloc.ID))
		}
		return err
	}
	h.mu.Lock()
	h.status, h.labels, h.network = st, labels, n
	h.mu.Unlock()
	return nil
}

// driverDNS is a dns block as the driver SDK takes it.
func driverDNS(d *structs.DNSConfig) *drivers.DNSConfig {
	if d == nil {
		return nil
	}
	return &drivers.DNSConfig{Servers: slices.Clone(d.Servers), Searches: slices.Clone(d.Searches), Options: slices.Clone(d.Options)}
}

// Spec returns the namespace the tasks join, with the group's hostname
// and dns block; nil when there is none.
func (h *networkHook) Spec() *drivers.NetworkIsolationSpec {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.status == nil {
		return nil
	}
	spec := &drivers.NetworkIsolationSpec{Path: h.status.Path, IP: h.status.IP, Labels: maps.Clone(h.labels)}
	if n := h.network; n != nil {
		spec.Hostname, spec.DNS = n.Hostname, driverDNS(n.DNS)
	}
	return spec
}

// NetworkStatus returns what the client reports of alloc's network
// (Allocation.NetworkStatus): for a namespace of its own (bridge, CNI),
// its interface, addresses and the group's dns block once wired, nil
// before; in host mode (no network block, or mode "host"), where the
// tasks share the node's network, a status with no interface and no
// address of the allocation's own and the group's dns block, as Nomad's
// clients report it (docs/networking.md).
func (h *networkHook) NetworkStatus(alloc *structs.Allocation) *structs.AllocNetworkStatus {
	h.mu.Lock()
	st, n := h.status, h.network
	h.mu.Unlock()
	if st != nil {
		return networkStatus(st, n)
	}
	switch groupNetworkMode(alloc) {
	case "", structs.NetworkModeHost:
		out := &structs.AllocNetworkStatus{}
		if g := groupNetwork(alloc); g != nil && g.DNS != nil {
			out.DNS = (&structs.NetworkResource{DNS: g.DNS}).Copy().DNS
		}
		return out
	}
	return nil
}

// networkStatus converts a wired namespace's status and its group's block
// to the API's AllocNetworkStatus; nil for none.
func networkStatus(st *allocnet.Status, n *structs.NetworkResource) *structs.AllocNetworkStatus {
	if st == nil {
		return nil
	}
	out := &structs.AllocNetworkStatus{InterfaceName: st.InterfaceName, Address: st.IP, AddressIPv6: st.IPv6}
	if n != nil && n.DNS != nil {
		out.DNS = (&structs.NetworkResource{DNS: n.DNS}).Copy().DNS
	}
	return out
}

// Postrun removes the namespace: every task is dead.
func (h *networkHook) Postrun(ctx context.Context, req *PostrunRequest, resp *PostrunResponse) error {
	return h.teardown(ctx, req.Alloc)
}

// Destroy removes the namespace if Postrun did not (a destroy before the
// tasks ran, or an earlier teardown that failed).
func (h *networkHook) Destroy(ctx context.Context, req *DestroyRequest, resp *DestroyResponse) error {
	return h.teardown(ctx, req.Alloc)
}

// teardown removes the wiring (CNI DEL, while the namespace still
// exists: the manager's bind mount holds it), then what the driver made.
func (h *networkHook) teardown(ctx context.Context, alloc *structs.Allocation) error {
	if h.manager == nil || !allocnet.Supported(groupNetworkMode(alloc)) {
		return nil
	}
	h.mu.Lock()
	h.status, h.labels, h.network = nil, nil, nil
	h.mu.Unlock()
	if err := h.manager.Teardown(ctx, alloc.ID); err != nil {
		return err
	}
	maker, driver, err := h.networkMaker(alloc)
	if err != nil || maker == nil {
		return err
	}
	if err := maker.DestroyNetwork(ctx, alloc.ID); err != nil {
		return fmt.Errorf("the %s driver: %w", driver, err)
	}
	return nil
}
