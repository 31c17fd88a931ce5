package server

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// NodeSignIdentity signs a new identity for the calling node (a JWT of
// structs.NodeIdentityClaims) with the keyring's active key, expiring
// after its pool's NodeIdentityTTL. The client asks for one when it
// registers, halfway to the expiry of the one it holds, and when an
// operator asks it to renew (docs/identity.md, "Node identities").
func (s *Server) NodeSignIdentity(ctx context.Context, req *structs.NodeSignIdentityRequest) (*structs.NodeSignIdentityResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	node, err := s.authNode(req.NodeID, req.SecretID)
	if err != nil {
		return nil, err
	}
	pool := structs.NodePoolOf(node)
	p, err := s.fsm.State().NodePoolByName(nil, pool)
	if err != nil {
		return nil, fmt.Errorf("read node pool %q: %w", pool, err)
	}
	key, err := s.activeRootKey()
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	claims := &structs.NodeIdentityClaims{
		NodeID: node.ID, NodePool: pool, NodeClass: node.NodeClass, NodeDatacenter: node.Datacenter,
		RegisteredClaims: structs.NewRegisteredClaims(structs.NodeIdentitySubject(s.config.Region, pool, node.ID), now, p.IdentityTTL()),
	}
	jwt, err := s.signIdentity(key, claims)
	if err != nil {
		return nil, fmt.Errorf("sign identity of node %q: %w", node.ID, err)
	}
	return &structs.NodeSignIdentityResponse{JWT: jwt, IssuedAt: claims.IssuedAt, Expiry: claims.Expiry}, nil
}
