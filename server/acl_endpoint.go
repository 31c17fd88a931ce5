package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// errACLDisabled answers the ACL methods of a server without ACLs.
var errACLDisabled = structs.Invalid("ACL support disabled")

// ACLBootstrap creates the first management token. It is refused once the
// ACLs were bootstrapped, unless the reset file holds the index of that
// bootstrap (the way back in when its token is lost).
func (s *Server) ACLBootstrap(ctx context.Context, req *structs.ACLBootstrapRequest) (*structs.ACLTokenResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	reset, err := s.aclResetIndex()
	if err != nil {
		return nil, err
	}
	st, err := s.fsm.State().ACLState(nil)
	if err != nil {
		return nil, err
	}
	if st.BootstrapIndex != 0 && st.BootstrapIndex != reset {
		return nil, structs.Invalid("ACL bootstrap already done (reset index: %d)", st.BootstrapIndex)
	}
	secret := req.BootstrapSecret
	if secret == "" {
		secret = structs.GenerateUUID()
	} else if !isUUID(secret) {
		return nil, structs.Invalid("invalid acl token")
	}
	tok := &structs.ACLToken{
		AccessorID: structs.GenerateUUID(), SecretID: secret, Name: "Bootstrap Token",
		Type: structs.ACLManagementToken, Global: true, CreateTime: s.clock.Now().UTC(),
	}
	index, _, err := s.raftApply(ACLBootstrapRequestType, &ACLBootstrapCommand{Token: tok, ResetIndex: reset})
	if err != nil {
		return nil, err
	}
	out, err := s.fsm.State().ACLTokenByAccessor(nil, tok.AccessorID)
	if err != nil {
		return nil, err
	}
	return &structs.ACLTokenResponse{Token: out.Copy(), WriteMeta: structs.WriteMeta{Index: index}}, nil
}

// aclResetIndex reads the reset file: 0 when there is none.
func (s *Server) aclResetIndex() (uint64, error) {
	if s.config.ACLBootstrapResetFile == "" {
		return 0, nil
	}
	b, err := os.ReadFile(s.config.ACLBootstrapResetFile)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the ACL bootstrap reset file: %w", err)
	}
	idx, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, structs.Invalid("the ACL bootstrap reset file %s must hold the reset index (a number): %v", s.config.ACLBootstrapResetFile, err)
	}
	return idx, nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// ACLPolicyUpsert creates or updates policies, whose rules must parse.
func (s *Server) ACLPolicyUpsert(ctx context.Context, req *structs.ACLPolicyUpsertRequest) (*structs.ACLWriteResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.Policies) == 0 {
		return nil, structs.Invalid("must specify as least one policy")
	}
	cmd := &ACLPolicyUpsertCommand{}
	for _, p := range req.Policies {
		if p == nil {
			return nil, structs.Invalid("a policy of the request is empty")
		}
		if err := p.Validate(); err != nil {
			return nil, err
		}
		if _, err := acl.Parse(p.Name, p.Rules); err != nil {
			return nil, structs.Invalid("failed to parse rules: %v", err)
		}
		c := p.Copy()
		c.CreateIndex, c.ModifyIndex = 0, 0
		cmd.Policies = append(cmd.Policies, c)
	}
	return applyWrite(s, req.RequestID, ACLPolicyUpsertRequestType, cmd, &structs.ACLWriteResponse{}, completeACLWrite)
}

// ACLPolicyDelete deletes policies.
func (s *Server) ACLPolicyDelete(ctx context.Context, req *structs.ACLPolicyDeleteRequest) (*structs.ACLWriteResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.Names) == 0 {
		return nil, structs.Invalid("must specify as least one policy")
	}
	for _, n := range req.Names {
		p, err := s.fsm.State().ACLPolicyByName(nil, n)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, structs.NotFound("ACL policy", n)
		}
	}
	return applyWrite(s, req.RequestID, ACLPolicyDeleteRequestType, &ACLPolicyDeleteCommand{Names: req.Names},
		&structs.ACLWriteResponse{}, completeACLWrite)
}

// ACLPolicyList lists policies by name.
func (s *Server) ACLPolicyList(ctx context.Context, req *structs.ACLPolicyListRequest) (*structs.ACLPolicyListResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.ACLPolicyListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		ps, err := st.ACLPolicies(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Policies = ps
		return max(st.Index(state.TableACLPolicies), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLPolicyGet reads one policy: management, or a token that holds it
// (directly or through a role) may.
func (s *Server) ACLPolicyGet(ctx context.Context, req *structs.ACLPolicySpecificRequest) (*structs.SingleACLPolicyResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if err := s.mayReadOwn(ctx, req.Name, ""); err != nil {
		return nil, err
	}
	resp := &structs.SingleACLPolicyResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		p, err := st.ACLPolicyByName(ws, req.Name)
		if err != nil {
			return 0, err
		}
		resp.Policy = p
		if p == nil {
			return max(st.Index(state.TableACLPolicies), 1), structs.NotFound("ACL policy", req.Name)
		}
		return p.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLTokenUpsert creates a token (a new AccessorID, or one given with its
// SecretID: an upload) or updates one (its type, secret, creation and
// expiry stay).
func (s *Server) ACLTokenUpsert(ctx context.Context, req *structs.ACLTokenUpsertRequest) (*structs.ACLTokenResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if req.Token == nil {
		return nil, structs.Invalid("missing token")
	}
	st := s.fsm.State()
	tok := req.Token.Copy()
	var existing *structs.ACLToken
	if tok.AccessorID != "" {
		var err error
		if existing, err = st.ACLTokenByAccessor(nil, tok.AccessorID); err != nil {
			return nil, err
		}
	}
	if err := tok.Validate(existing); err != nil {
		return nil, err
	}
	switch {
	case existing != nil:
		if tok.SecretID != "" && tok.SecretID != existing.SecretID {
			return nil, structs.Invalid("cannot change the token's secret ID")
		}
	case tok.AccessorID != "":
		// An upload: both IDs given.
		if tok.SecretID == "" || !isUUID(tok.AccessorID) || !isUUID(tok.SecretID) {
			return nil, structs.Invalid("an uploaded token needs a UUID accessor ID and secret ID")
		}
		if other, err := st.ACLTokenBySecret(nil, tok.SecretID); err != nil || other != nil {
			if err != nil {
				return nil, err
			}
			return nil, structs.Invalid("a token with this secret ID exists")
		}
	default:
		tok.AccessorID, tok.SecretID = structs.GenerateUUID(), structs.GenerateUUID()
	}
	if existing == nil {
		tok.CreateTime = s.clock.Now().UTC()
		if tok.ExpirationTTL != 0 {
			e := tok.CreateTime.Add(tok.ExpirationTTL)
			tok.ExpirationTime = &e
		}
	}
	// Policies are linked by name and need not exist yet (as Nomad's): a
	// missing one grants nothing until it is written.
	for i, link := range tok.Roles {
		r, err := s.lookupRoleLink(link)
		if err != nil {
			return nil, err
		}
		tok.Roles[i] = &structs.ACLTokenRoleLink{ID: r.ID, Name: r.Name}
	}
	tok.CreateIndex, tok.ModifyIndex = 0, 0
	resp, err := applyWrite(s, req.RequestID, ACLTokenUpsertRequestType, &ACLTokenUpsertCommand{Tokens: []*structs.ACLToken{tok}},
		&structs.ACLTokenResponse{}, completeACLToken)
	if err != nil {
		return nil, err
	}
	stored, err := s.fsm.State().ACLTokenByAccessor(nil, tok.AccessorID)
	if err != nil {
		return nil, err
	}
	resp.Token = stored.Copy()
	return resp, nil
}

func (s *Server) lookupRoleLink(link *structs.ACLTokenRoleLink) (*structs.ACLRole, error) {
	if link == nil {
		return nil, structs.Invalid("a role link of the token is empty")
	}
	st := s.fsm.State()
	var (
		r   *structs.ACLRole
		err error
	)
	switch {
	case link.ID != "":
		r, err = st.ACLRoleByID(nil, link.ID)
	case link.Name != "":
		r, err = st.ACLRoleByName(nil, link.Name)
	default:
		return nil, structs.Invalid("a role link needs an ID or a name")
	}
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, structs.Invalid("cannot find role %s", link.ID+link.Name)
	}
	return r, nil
}

// ACLTokenDelete deletes tokens by accessor ID.
func (s *Server) ACLTokenDelete(ctx context.Context, req *structs.ACLTokenDeleteRequest) (*structs.ACLWriteResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.AccessorIDs) == 0 {
		return nil, structs.Invalid("must specify as least one token")
	}
	for _, id := range req.AccessorIDs {
		t, err := s.fsm.State().ACLTokenByAccessor(nil, id)
		if err != nil {
			return nil, err
		}
		if t == nil {
			return nil, structs.NotFound("ACL token", id)
		}
	}
	return applyWrite(s, req.RequestID, ACLTokenDeleteRequestType, &ACLTokenDeleteCommand{AccessorIDs: req.AccessorIDs},
		&structs.ACLWriteResponse{}, completeACLWrite)
}

// ACLTokenList lists tokens without their secrets.
func (s *Server) ACLTokenList(ctx context.Context, req *structs.ACLTokenListRequest) (*structs.ACLTokenListResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.ACLTokenListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		ts, err := st.ACLTokens(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Tokens = make([]*structs.ACLToken, 0, len(ts))
		for _, t := range ts {
			c := t.Copy()
			c.SecretID = ""
			resp.Tokens = append(resp.Tokens, c)
		}
		return max(st.Index(state.TableACLTokens), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLTokenGet reads one token by accessor ID.
func (s *Server) ACLTokenGet(ctx context.Context, req *structs.ACLTokenSpecificRequest) (*structs.SingleACLTokenResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	return s.tokenQuery(ctx, req, func(ws memdb.WatchSet, st *state.StateStore) (*structs.ACLToken, error) {
		return st.ACLTokenByAccessor(ws, req.AccessorID)
	}, req.AccessorID)
}

// ACLTokenSelf reads the token whose secret is the caller's (its
// SecretID; over the wire, the call's token).
func (s *Server) ACLTokenSelf(ctx context.Context, req *structs.ACLTokenSpecificRequest) (*structs.SingleACLTokenResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	secret := req.SecretID
	if secret == "" {
		secret = rpcapi.AuthToken(ctx)
	}
	if secret == "" {
		return nil, structs.NewError(structs.KindPermission, "ACL token not found")
	}
	resp, err := s.tokenQuery(ctx, req, func(ws memdb.WatchSet, st *state.StateStore) (*structs.ACLToken, error) {
		return st.ACLTokenBySecret(ws, secret)
	}, "self")
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, structs.NewError(structs.KindPermission, "ACL token not found")
	}
	return resp, err
}

func (s *Server) tokenQuery(ctx context.Context, req *structs.ACLTokenSpecificRequest,
	get func(memdb.WatchSet, *state.StateStore) (*structs.ACLToken, error), name string,
) (*structs.SingleACLTokenResponse, error) {
	resp := &structs.SingleACLTokenResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		t, err := get(ws, st)
		if err != nil {
			return 0, err
		}
		resp.Token = t.Copy()
		if t == nil {
			return max(st.Index(state.TableACLTokens), 1), structs.NotFound("ACL token", name)
		}
		return t.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLRoleUpsert creates (no ID) or updates a role; its policies must
// exist.
func (s *Server) ACLRoleUpsert(ctx context.Context, req *structs.ACLRoleUpsertRequest) (*structs.ACLRoleResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if req.Role == nil {
		return nil, structs.Invalid("missing role")
	}
	r := req.Role.Copy()
	if err := r.Validate(); err != nil {
		return nil, err
	}
	st := s.fsm.State()
	if r.ID == "" {
		r.ID = structs.GenerateUUID()
	} else {
		old, err := st.ACLRoleByID(nil, r.ID)
		if err != nil {
			return nil, err
		}
		if old == nil {
			return nil, structs.NotFound("ACL role", r.ID)
		}
	}
	if other, err := st.ACLRoleByName(nil, r.Name); err != nil || (other != nil && other.ID != r.ID) {
		if err != nil {
			return nil, err
		}
		return nil, structs.Invalid("ACL role with name %s already exists", r.Name)
	}
	for _, p := range r.PolicyNames() {
		pol, err := st.ACLPolicyByName(nil, p)
		if err != nil {
			return nil, err
		}
		if pol == nil {
			return nil, structs.Invalid("cannot find policy %s", p)
		}
	}
	r.CreateIndex, r.ModifyIndex = 0, 0
	resp, err := applyWrite(s, req.RequestID, ACLRoleUpsertRequestType, &ACLRoleUpsertCommand{Roles: []*structs.ACLRole{r}},
		&structs.ACLRoleResponse{}, completeACLRole)
	if err != nil {
		return nil, err
	}
	stored, err := s.fsm.State().ACLRoleByID(nil, r.ID)
	if err != nil {
		return nil, err
	}
	resp.Role = stored.Copy()
	return resp, nil
}

// ACLRoleDelete deletes roles by ID.
func (s *Server) ACLRoleDelete(ctx context.Context, req *structs.ACLRoleDeleteRequest) (*structs.ACLWriteResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.IDs) == 0 {
		return nil, structs.Invalid("must specify as least one role")
	}
	for _, id := range req.IDs {
		r, err := s.fsm.State().ACLRoleByID(nil, id)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, structs.NotFound("ACL role", id)
		}
	}
	return applyWrite(s, req.RequestID, ACLRoleDeleteRequestType, &ACLRoleDeleteCommand{IDs: req.IDs},
		&structs.ACLWriteResponse{}, completeACLWrite)
}

// ACLRoleList lists roles by name.
func (s *Server) ACLRoleList(ctx context.Context, req *structs.ACLRoleListRequest) (*structs.ACLRoleListResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.ACLRoleListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		rs, err := st.ACLRoles(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Roles = rs
		return max(st.Index(state.TableACLRoles), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLRoleGet reads one role by ID, or by name: management, or a token
// linked to it may.
func (s *Server) ACLRoleGet(ctx context.Context, req *structs.ACLRoleSpecificRequest) (*structs.SingleACLRoleResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.SingleACLRoleResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var (
			r   *structs.ACLRole
			err error
		)
		if req.ID != "" {
			r, err = st.ACLRoleByID(ws, req.ID)
		} else {
			r, err = st.ACLRoleByName(ws, req.Name)
		}
		if err != nil {
			return 0, err
		}
		id := req.ID
		if r != nil {
			id = r.ID
		}
		// A token that does not hold the role learns nothing of it, not
		// even whether it exists.
		if err := s.mayReadOwn(ctx, "", id); err != nil {
			return 0, err
		}
		resp.Role = r
		if r == nil {
			return max(st.Index(state.TableACLRoles), 1), structs.NotFound("ACL role", req.ID+req.Name)
		}
		return r.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLResolveToken returns a secret's token and the policies it holds
// ("" resolves to the anonymous policy, when one exists). An unknown
// secret is KindPermission "ACL token not found", an expired token
// "ACL token expired".
func (s *Server) ACLResolveToken(ctx context.Context, req *structs.ACLResolveRequest) (*structs.ACLResolveResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	st := s.fsm.State()
	resp := &structs.ACLResolveResponse{}
	resp.Index = max(st.ACLIndex(), 1)
	tok, pols, err := resolveToken(st, req.SecretID, s.clock.Now())
	if err != nil {
		return nil, err
	}
	resp.Token, resp.Policies = tok.Copy(), pols
	return resp, nil
}

func completeACLWrite(r *structs.ACLWriteResponse, index uint64, _ any) { r.Index = index }

func completeACLToken(r *structs.ACLTokenResponse, index uint64, _ any) { r.Index = index }

func completeACLRole(r *structs.ACLRoleResponse, index uint64, _ any) { r.Index = index }
