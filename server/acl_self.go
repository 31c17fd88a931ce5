package server

import (
	"context"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// callerToken returns the token of the call's secret (secret, or the
// call's token when empty): KindPermission when there is none, it is
// unknown or expired.
func (s *Server) callerToken(ctx context.Context, secret string) (*structs.ACLToken, error) {
	if secret == "" {
		secret = rpcapi.AuthToken(ctx)
	}
	if secret == "" {
		return nil, errTokenNotFound
	}
	tok, err := s.fsm.State().ACLTokenBySecret(nil, secret)
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, errTokenNotFound
	}
	if tok.IsExpired(s.clock.Now()) {
		return nil, errTokenExpired
	}
	return tok, nil
}

// tokenPolicyNames returns the names of the policies a token holds,
// directly and through its roles, and the IDs of its roles.
func tokenPolicyNames(st *state.StateStore, ws memdb.WatchSet, tok *structs.ACLToken) ([]string, []string, error) {
	names := slices.Clone(tok.Policies)
	var roles []string
	for _, link := range tok.Roles {
		r, err := st.ACLRoleByID(ws, link.ID)
		if err != nil {
			return nil, nil, err
		}
		if r != nil {
			roles = append(roles, r.ID)
			names = append(names, r.PolicyNames()...)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), roles, nil
}

// mayReadOwn reports whether the caller may read a policy (role, with
// role set) that is not management's to read: when its token holds it.
// Calls in process that carry no token at all (the server's own) may.
func (s *Server) mayReadOwn(ctx context.Context, policy, role string) error {
	if !rpcapi.HasAuthToken(ctx) && !rpcapi.Remote(ctx) {
		return nil
	}
	tok, err := s.callerToken(ctx, rpcapi.AuthToken(ctx))
	if err != nil {
		return err
	}
	if tok.IsManagement() {
		return nil
	}
	names, roles, err := tokenPolicyNames(s.fsm.State(), nil, tok)
	if err != nil {
		return err
	}
	if (policy != "" && slices.Contains(names, policy)) || (role != "" && slices.Contains(roles, role)) {
		return nil
	}
	return errPermission
}

// ACLPolicySelf lists the policies the caller's token holds, directly and
// through its roles (none for a management token, which holds all).
func (s *Server) ACLPolicySelf(ctx context.Context, req *structs.ACLPolicySelfRequest) (*structs.ACLPolicyListResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	tok, err := s.callerToken(ctx, req.SecretID)
	if err != nil {
		return nil, err
	}
	resp := &structs.ACLPolicyListResponse{}
	err = s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		resp.Policies = nil
		names, _, err := tokenPolicyNames(st, ws, tok)
		if err != nil {
			return 0, err
		}
		for _, n := range names {
			p, err := st.ACLPolicyByName(ws, n)
			if err != nil {
				return 0, err
			}
			if p != nil {
				resp.Policies = append(resp.Policies, p)
			}
		}
		return max(st.Index(state.TableACLPolicies), st.Index(state.TableACLRoles), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// OneTimeTokenUpsert makes a one-time token for the caller's token: a
// secret that OneTimeTokenExchange trades for that token, once, within
// structs.OneTimeTokenTTL (to hand a token to a browser through a URL).
func (s *Server) OneTimeTokenUpsert(ctx context.Context, req *structs.OneTimeTokenUpsertRequest) (*structs.OneTimeTokenUpsertResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	tok, err := s.callerToken(ctx, req.SecretID)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now().UTC()
	ott := &structs.OneTimeToken{OneTimeSecretID: structs.GenerateUUID(), AccessorID: tok.AccessorID, ExpiresAt: now.Add(structs.OneTimeTokenTTL)}
	index, _, err := s.raftApply(OneTimeTokenUpsertRequestType, &OneTimeTokenUpsertCommand{Token: ott, Now: now})
	if err != nil {
		return nil, err
	}
	stored, err := s.fsm.State().OneTimeTokenBySecret(nil, ott.OneTimeSecretID)
	if err != nil {
		return nil, err
	}
	return &structs.OneTimeTokenUpsertResponse{OneTimeToken: stored.Copy(), WriteMeta: structs.WriteMeta{Index: index}}, nil
}

// OneTimeTokenExchange trades a one-time secret for its token, once.
func (s *Server) OneTimeTokenExchange(ctx context.Context, req *structs.OneTimeTokenExchangeRequest) (*structs.ACLTokenResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if req.OneTimeSecretID == "" {
		return nil, structs.Invalid("missing one-time secret ID")
	}
	ott, err := s.fsm.State().OneTimeTokenBySecret(nil, req.OneTimeSecretID)
	if err != nil {
		return nil, err
	}
	if ott == nil {
		return nil, structs.NewError(structs.KindPermission, "one-time token not found (used or expired)")
	}
	// The FSM removes it, refusing a second exchange that raced this one.
	index, _, err := s.raftApply(OneTimeTokenExchangeRequestType, &OneTimeTokenExchangeCommand{OneTimeSecretID: ott.OneTimeSecretID, Now: s.clock.Now().UTC()})
	if err != nil {
		return nil, err
	}
	tok, err := s.fsm.State().ACLTokenByAccessor(nil, ott.AccessorID)
	if err != nil {
		return nil, err
	}
	if tok == nil || tok.IsExpired(s.clock.Now()) {
		return nil, structs.NewError(structs.KindPermission, "the one-time token's ACL token is gone or expired")
	}
	return &structs.ACLTokenResponse{Token: tok.Copy(), WriteMeta: structs.WriteMeta{Index: index}}, nil
}

// ClientIntroductionToken signs a JWT that introduces a new client node:
// its claims name the node pool (default "default") and, when given, the
// node's name; it expires after TTL (default
// structs.ClientIntroductionTokenDefaultTTL).
func (s *Server) ClientIntroductionToken(ctx context.Context, req *structs.ClientIntroductionTokenRequest) (*structs.ClientIntroductionTokenResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ttl := req.TTL
	switch {
	case ttl == 0:
		ttl = structs.ClientIntroductionTokenDefaultTTL
	case ttl < 0 || ttl > structs.ClientIntroductionTokenMaxTTL:
		return nil, structs.Invalid("introduction token TTL %s out of bounds: use up to %s", ttl, structs.ClientIntroductionTokenMaxTTL)
	}
	pool := req.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	key, err := s.activeRootKey()
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	claims := &structs.ClientIntroductionClaims{
		NodeName: req.NodeName, NodePool: pool,
		RegisteredClaims: structs.NewRegisteredClaims("node-introduction:"+s.config.Region+":"+pool+":"+req.NodeName+":default", now, ttl),
	}
	jwt, err := s.signIdentity(key, claims)
	if err != nil {
		return nil, err
	}
	return &structs.ClientIntroductionTokenResponse{JWT: jwt}, nil
}
