package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of workload identities.
var (
	// AllocSignIdentities signs the identities of a task of one of the
	// calling node's allocations (authenticated by the node's secret).
	// Idempotent: signing again returns fresh tokens for the same task
	// and changes no state.
	AllocSignIdentities = idempotent[structs.AllocSignIdentitiesRequest, structs.AllocSignIdentitiesResponse]("AllocSignIdentities")
	// IdentityAuthorize verifies a workload identity and checks that it
	// may do an operation (the implicit policy), returning its claims.
	IdentityAuthorize = read[structs.IdentityAuthorizeRequest, structs.IdentityAuthorizeResponse]("IdentityAuthorize")
	// NodeSignIdentity signs a new identity for the calling node
	// (authenticated by the node's secret). Idempotent: signing again
	// returns a fresh token and changes no state.
	NodeSignIdentity = idempotent[structs.NodeSignIdentityRequest, structs.NodeSignIdentityResponse]("NodeSignIdentity")
)

func identityMethods() []*Info {
	return []*Info{AllocSignIdentities.info, IdentityAuthorize.info, NodeSignIdentity.info}
}
