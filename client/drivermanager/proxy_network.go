package drivermanager

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/plugins/drivers"
)

var _ drivers.DriverNetworkManager = (*proxy)(nil)

// networkManager returns the current instance as a DriverNetworkManager,
// or an error wrapping drivers.ErrNotSupported for a driver that is not
// one (an external plugin: the gRPC protocol does not carry it).
func (p *proxy) networkManager(ctx context.Context) (drivers.DriverNetworkManager, error) {
	d, _, err := p.current(ctx, 0)
	if err != nil {
		return nil, err
	}
	nm, ok := d.(drivers.DriverNetworkManager)
	if !ok {
		return nil, fmt.Errorf("driver %q: allocation networks: %w", p.name, drivers.ErrNotSupported)
	}
	return nm, nil
}

// CreateNetwork makes an allocation's network namespace on the current
// instance.
func (p *proxy) CreateNetwork(ctx context.Context, req *drivers.CreateNetworkRequest) (*drivers.NetworkIsolationSpec, error) {
	nm, err := p.networkManager(ctx)
	if err != nil {
		return nil, err
	}
	return nm.CreateNetwork(ctx, req)
}

// DestroyNetwork removes an allocation's network namespace on the current
// instance.
func (p *proxy) DestroyNetwork(ctx context.Context, allocID string) error {
	nm, err := p.networkManager(ctx)
	if err != nil {
		return err
	}
	return nm.DestroyNetwork(ctx, allocID)
}

// Networks lists the allocations the current instance holds namespaces
// for on behalf of node nodeID.
func (p *proxy) Networks(ctx context.Context, nodeID string) ([]string, error) {
	nm, err := p.networkManager(ctx)
	if err != nil {
		return nil, err
	}
	return nm.Networks(ctx, nodeID)
}
