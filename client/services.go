package client

import (
	"context"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// serviceRegistrar is the AllocRunners' way to the servers' service
// registrations, with the node's credentials.
type serviceRegistrar struct{ c *Client }

var _ allocrunner.ServiceRegistrar = serviceRegistrar{}

// UpsertServices registers instances.
func (r serviceRegistrar) UpsertServices(ctx context.Context, regs []*structs.ServiceRegistration) error {
	_, err := rpcapi.ServiceRegistrationUpsert.Call(ctx, r.c.rpc, &structs.ServiceRegistrationUpsertRequest{
		NodeID: r.c.NodeID(), SecretID: r.c.secretID(), Services: regs,
	})
	return err
}

// DeleteServices deletes instances of this node by ID.
func (r serviceRegistrar) DeleteServices(ctx context.Context, namespace string, ids []string) error {
	_, err := rpcapi.ServiceRegistrationDelete.Call(ctx, r.c.rpc, &structs.ServiceRegistrationDeleteRequest{
		NodeID: r.c.NodeID(), SecretID: r.c.secretID(), Namespace: namespace, IDs: ids,
	})
	return err
}

// DeleteAllocServices deletes every instance of an allocation.
func (r serviceRegistrar) DeleteAllocServices(ctx context.Context, allocID string) error {
	_, err := rpcapi.ServiceRegistrationDelete.Call(ctx, r.c.rpc, &structs.ServiceRegistrationDeleteRequest{
		NodeID: r.c.NodeID(), SecretID: r.c.secretID(), AllocIDs: []string{allocID},
	})
	return err
}

// AllocServices reads the servers' registrations of an allocation.
func (r serviceRegistrar) AllocServices(ctx context.Context, allocID string) ([]*structs.ServiceRegistration, error) {
	resp, err := rpcapi.ServiceRegistrationGet.Call(ctx, r.c.rpc, &structs.ServiceRegistrationByNameRequest{
		AllocID: allocID, QueryOptions: structs.QueryOptions{Region: r.c.region},
	})
	if err != nil {
		return nil, err
	}
	return resp.Services, nil
}

// AllocChecks returns the latest results of an allocation's service
// checks, by check ID.
func (c *Client) AllocChecks(allocID string) (map[string]*structs.CheckQueryResult, error) {
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return nil, err
	}
	return ar.CheckResults(), nil
}
