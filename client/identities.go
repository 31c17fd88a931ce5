package client

import (
	"context"

	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// identitySigner is the TaskRunners' way to have their tasks' workload
// identities signed by the servers, with the node's credentials.
type identitySigner struct{ c *Client }

var _ taskrunner.IdentitySigner = identitySigner{}

// SignIdentities signs every identity of a task of one of this node's
// allocations.
func (s identitySigner) SignIdentities(ctx context.Context, allocID, task string) ([]*structs.SignedIdentity, error) {
	resp, err := rpcapi.AllocSignIdentities.Call(ctx, s.c.rpc, &structs.AllocSignIdentitiesRequest{
		NodeID: s.c.NodeID(), SecretID: s.c.secretID(), AllocID: allocID, Task: task,
		QueryOptions: structs.QueryOptions{Region: s.c.region},
	})
	if err != nil {
		return nil, err
	}
	return resp.Identities, nil
}
