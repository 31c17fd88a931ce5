package server

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// ACLAuthMethodUpsert creates or updates auth methods.
func (s *Server) ACLAuthMethodUpsert(ctx context.Context, req *structs.ACLAuthMethodUpsertRequest) (*structs.ACLAuthMethodUpsertResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.AuthMethods) == 0 {
		return nil, structs.Invalid("must specify as least one auth method")
	}
	now := s.clock.Now().UTC()
	cmd := &ACLAuthMethodUpsertCommand{}
	for _, m := range req.AuthMethods {
		if m == nil {
			return nil, structs.Invalid("an auth method of the request is empty")
		}
		c := m.Copy()
		if c.TokenNameFormat == "" {
			c.TokenNameFormat = defaultTokenNameFormat
		}
		if err := c.Validate(); err != nil {
			return nil, err
		}
		c.CreateTime, c.ModifyTime = now, now
		c.CreateIndex, c.ModifyIndex = 0, 0
		cmd.AuthMethods = append(cmd.AuthMethods, c)
	}
	resp, err := applyWrite(s, req.RequestID, ACLAuthMethodUpsertRequestType, cmd,
		&structs.ACLAuthMethodUpsertResponse{}, func(r *structs.ACLAuthMethodUpsertResponse, index uint64, _ any) { r.Index = index })
	if err != nil {
		return nil, err
	}
	resp.AuthMethods = nil
	for _, m := range cmd.AuthMethods {
		stored, err := s.fsm.State().ACLAuthMethodByName(nil, m.Name)
		if err != nil {
			return nil, err
		}
		if stored != nil {
			resp.AuthMethods = append(resp.AuthMethods, stored.Copy())
		}
	}
	return resp, nil
}

// ACLAuthMethodDelete deletes auth methods, and their binding rules.
func (s *Server) ACLAuthMethodDelete(ctx context.Context, req *structs.ACLAuthMethodDeleteRequest) (*structs.ACLWriteResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.Names) == 0 {
		return nil, structs.Invalid("must specify as least one auth method")
	}
	for _, n := range req.Names {
		m, err := s.fsm.State().ACLAuthMethodByName(nil, n)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, structs.NotFound("ACL auth method", n)
		}
	}
	return applyWrite(s, req.RequestID, ACLAuthMethodDeleteRequestType, &ACLAuthMethodDeleteCommand{Names: req.Names},
		&structs.ACLWriteResponse{}, completeACLWrite)
}

// ACLAuthMethodList lists auth methods by name, without their configs.
func (s *Server) ACLAuthMethodList(ctx context.Context, req *structs.ACLAuthMethodListRequest) (*structs.ACLAuthMethodListResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.ACLAuthMethodListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		ms, err := st.ACLAuthMethods(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		// Anyone may list them (to log in): without their configs, which
		// may hold an OIDC client secret.
		resp.AuthMethods = make([]*structs.ACLAuthMethod, 0, len(ms))
		for _, m := range ms {
			c := *m
			c.Config = nil
			resp.AuthMethods = append(resp.AuthMethods, &c)
		}
		return max(st.Index(state.TableACLAuthMethods), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLAuthMethodGet reads one auth method.
func (s *Server) ACLAuthMethodGet(ctx context.Context, req *structs.ACLAuthMethodGetRequest) (*structs.ACLAuthMethodGetResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.ACLAuthMethodGetResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		m, err := st.ACLAuthMethodByName(ws, req.Name)
		if err != nil {
			return 0, err
		}
		resp.AuthMethod = m
		if m == nil {
			return max(st.Index(state.TableACLAuthMethods), 1), structs.NotFound("ACL auth method", req.Name)
		}
		return m.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLBindingRuleUpsert creates (no ID) or updates binding rules: their
// auth method must exist and their selector compile.
func (s *Server) ACLBindingRuleUpsert(ctx context.Context, req *structs.ACLBindingRuleUpsertRequest) (*structs.ACLBindingRuleUpsertResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.BindingRules) == 0 {
		return nil, structs.Invalid("must specify as least one binding rule")
	}
	st := s.fsm.State()
	now := s.clock.Now().UTC()
	cmd := &ACLBindingRuleUpsertCommand{}
	for _, r := range req.BindingRules {
		if r == nil {
			return nil, structs.Invalid("a binding rule of the request is empty")
		}
		c := r.Copy()
		if err := c.Validate(); err != nil {
			return nil, err
		}
		if _, err := compileSelector(c.Selector); err != nil {
			return nil, structs.Invalid("invalid ACL binding rule: selector %q: %v", c.Selector, err)
		}
		m, err := st.ACLAuthMethodByName(nil, c.AuthMethod)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, structs.Invalid("ACL auth method %q not found: create it first", c.AuthMethod)
		}
		if c.ID == "" {
			c.ID = structs.GenerateUUID()
		} else {
			old, err := st.ACLBindingRuleByID(nil, c.ID)
			if err != nil {
				return nil, err
			}
			if old == nil {
				return nil, structs.NotFound("ACL binding rule", c.ID)
			}
		}
		c.CreateTime, c.ModifyTime = now, now
		c.CreateIndex, c.ModifyIndex = 0, 0
		cmd.BindingRules = append(cmd.BindingRules, c)
	}
	resp, err := applyWrite(s, req.RequestID, ACLBindingRuleUpsertRequestType, cmd,
		&structs.ACLBindingRuleUpsertResponse{}, func(r *structs.ACLBindingRuleUpsertResponse, index uint64, _ any) { r.Index = index })
	if err != nil {
		return nil, err
	}
	resp.BindingRules = nil
	for _, r := range cmd.BindingRules {
		stored, err := s.fsm.State().ACLBindingRuleByID(nil, r.ID)
		if err != nil {
			return nil, err
		}
		if stored != nil {
			resp.BindingRules = append(resp.BindingRules, stored.Copy())
		}
	}
	return resp, nil
}

// ACLBindingRuleDelete deletes binding rules by ID.
func (s *Server) ACLBindingRuleDelete(ctx context.Context, req *structs.ACLBindingRuleDeleteRequest) (*structs.ACLWriteResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if len(req.IDs) == 0 {
		return nil, structs.Invalid("must specify as least one binding rule")
	}
	for _, id := range req.IDs {
		r, err := s.fsm.State().ACLBindingRuleByID(nil, id)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, structs.NotFound("ACL binding rule", id)
		}
	}
	return applyWrite(s, req.RequestID, ACLBindingRuleDeleteRequestType, &ACLBindingRuleDeleteCommand{IDs: req.IDs},
		&structs.ACLWriteResponse{}, completeACLWrite)
}

// ACLBindingRuleList lists binding rules by ID.
func (s *Server) ACLBindingRuleList(ctx context.Context, req *structs.ACLBindingRuleListRequest) (*structs.ACLBindingRuleListResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.ACLBindingRuleListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		rs, err := st.ACLBindingRules(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.BindingRules = rs
		return max(st.Index(state.TableACLBindingRules), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// ACLBindingRuleGet reads one binding rule.
func (s *Server) ACLBindingRuleGet(ctx context.Context, req *structs.ACLBindingRuleGetRequest) (*structs.ACLBindingRuleGetResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	resp := &structs.ACLBindingRuleGetResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		r, err := st.ACLBindingRuleByID(ws, req.ID)
		if err != nil {
			return 0, err
		}
		resp.BindingRule = r
		if r == nil {
			return max(st.Index(state.TableACLBindingRules), 1), structs.NotFound("ACL binding rule", req.ID)
		}
		return r.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
