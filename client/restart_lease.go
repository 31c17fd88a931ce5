package client

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// restartLeaser takes and gives back template restart leases from the
// servers for the node's allocations (server/restart_lease.go); it
// implements taskrunner.RestartLeaser.
type restartLeaser struct {
	rpc            rpcapi.Conn
	nodeID, secret string
}

// AcquireRestartLease asks for allocID's lease.
func (l restartLeaser) AcquireRestartLease(ctx context.Context, allocID string) (*structs.AllocRestartLeaseResponse, error) {
	resp, err := rpcapi.AllocRestartLease.Call(ctx, l.rpc, &structs.AllocRestartLeaseRequest{NodeID: l.nodeID, SecretID: l.secret, AllocID: allocID})
	if err != nil {
		return nil, fmt.Errorf("take the restart lease of alloc %q: %w", allocID, err)
	}
	return resp, nil
}

// ReleaseRestartLease gives allocID's lease back.
func (l restartLeaser) ReleaseRestartLease(ctx context.Context, allocID string) error {
	_, err := rpcapi.AllocRestartLease.Call(ctx, l.rpc, &structs.AllocRestartLeaseRequest{NodeID: l.nodeID, SecretID: l.secret, AllocID: allocID, Release: true})
	if err != nil {
		return fmt.Errorf("give back the restart lease of alloc %q: %w", allocID, err)
	}
	return nil
}
