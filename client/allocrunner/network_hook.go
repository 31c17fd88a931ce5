package allocrunner

import (
	"context"
	"fmt"
	"log/slog"
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
type networkHook struct {
	manager NetworkManager // nil: the client has no CNI networking
	logger  *slog.Logger

	mu     sync.Mutex
	status *allocnet.Status
}

// Name returns "network".
func (*networkHook) Name() string { return "network" }

// groupNetworkMode returns the network mode alloc's group sets.
func groupNetworkMode(alloc *structs.Allocation) string {
	if alloc == nil || alloc.Job == nil {
		return ""
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil || len(tg.Networks) == 0 || tg.Networks[0] == nil {
		return ""
	}
	return tg.Networks[0].Mode
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
	netReq := &allocnet.Request{AllocID: req.Alloc.ID, Mode: mode}
	if ar := req.Alloc.AllocatedResources; ar != nil {
		for _, p := range ar.Shared.Ports {
			netReq.Ports = append(netReq.Ports, allocnet.Port{HostIP: p.HostIP, HostPort: p.Value, ContainerPort: p.To})
		}
	}
	st, err := h.manager.Setup(ctx, netReq)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.status = st
	h.mu.Unlock()
	return nil
}

// Spec returns the namespace the tasks join; nil when there is none.
func (h *networkHook) Spec() *drivers.NetworkIsolationSpec {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.status == nil {
		return nil
	}
	return &drivers.NetworkIsolationSpec{Path: h.status.Path, IP: h.status.IP}
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

func (h *networkHook) teardown(ctx context.Context, alloc *structs.Allocation) error {
	if h.manager == nil || !allocnet.Supported(groupNetworkMode(alloc)) {
		return nil
	}
	h.mu.Lock()
	h.status = nil
	h.mu.Unlock()
	return h.manager.Teardown(ctx, alloc.ID)
}
