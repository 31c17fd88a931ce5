package httpapi

import (
	"net/http"
	"slices"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerACLRoutes adds the ACL endpoints, as Nomad's.
func (s *Server) registerACLRoutes(rt *router) {
	write := []string{http.MethodPut, http.MethodPost}
	rt.handle("/v1/acl/bootstrap", s.wrap(s.aclBootstrap), write...)
	rt.handle("/v1/acl/policies", s.wrap(s.aclPolicyList), http.MethodGet)
	rt.handle("/v1/acl/policy/{name}", s.wrap(s.aclPolicyGet), http.MethodGet)
	rt.handle("/v1/acl/policy/{name}", s.wrap(s.aclPolicyUpsert), write...)
	rt.handle("/v1/acl/policy/{name}", s.wrap(s.aclPolicyDelete), http.MethodDelete)
	rt.handle("/v1/acl/tokens", s.wrap(s.aclTokenList), http.MethodGet)
	rt.handle("/v1/acl/token", s.wrap(s.aclTokenUpsert), write...)
	rt.handle("/v1/acl/token/self", s.wrap(s.aclTokenSelf), http.MethodGet)
	rt.handle("/v1/acl/token/{id}", s.wrap(s.aclTokenGet), http.MethodGet)
	rt.handle("/v1/acl/token/{id}", s.wrap(s.aclTokenUpsert), write...)
	rt.handle("/v1/acl/token/{id}", s.wrap(s.aclTokenDelete), http.MethodDelete)
	rt.handle("/v1/acl/roles", s.wrap(s.aclRoleList), http.MethodGet)
	rt.handle("/v1/acl/role", s.wrap(s.aclRoleUpsert), write...)
	rt.handle("/v1/acl/role/name/{name}", s.wrap(s.aclRoleGet), http.MethodGet)
	rt.handle("/v1/acl/role/{id}", s.wrap(s.aclRoleGet), http.MethodGet)
	rt.handle("/v1/acl/role/{id}", s.wrap(s.aclRoleUpsert), write...)
	rt.handle("/v1/acl/role/{id}", s.wrap(s.aclRoleDelete), http.MethodDelete)
}

// aclBootstrap is PUT|POST /v1/acl/bootstrap [{"BootstrapSecret"}]: the
// first management token, once.
func (s *Server) aclBootstrap(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.BootstrapRequest
	if req.ContentLength != 0 {
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
	}
	resp, err := rpcapi.ACLBootstrap.Call(req.Context(), s.rpc, &structs.ACLBootstrapRequest{BootstrapSecret: body.BootstrapSecret})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return apiACLToken(resp.Token), nil
}

func (s *Server) aclPolicyList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLPolicyList.Call(req.Context(), s.rpc, &structs.ACLPolicyListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.ACLPolicyListStub, 0, len(resp.Policies))
	for _, p := range resp.Policies {
		out = append(out, &api.ACLPolicyListStub{Name: p.Name, Description: p.Description, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex})
	}
	return out, nil
}

func (s *Server) aclPolicyGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLPolicyGet.Call(req.Context(), s.rpc, &structs.ACLPolicySpecificRequest{Name: req.PathValue("name"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	p := resp.Policy
	return &api.ACLPolicy{Name: p.Name, Description: p.Description, Rules: p.Rules, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}, nil
}

// aclPolicyUpsert is PUT|POST /v1/acl/policy/:name: the body's name must
// be the path's (or empty).
func (s *Server) aclPolicyUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.ACLPolicy
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	name := req.PathValue("name")
	switch body.Name {
	case "":
		body.Name = name
	case name:
	default:
		return nil, structs.Invalid("Policy name does not match request path")
	}
	if j := body.JobACL; j != nil && (j.Namespace != "" || j.JobID != "" || j.Group != "" || j.Task != "") {
		return nil, structs.Invalid("policy %q: JobACL (workload identity policies) is not supported by drover: remove it", name)
	}
	p := &structs.ACLPolicy{Name: body.Name, Description: body.Description, Rules: body.Rules}
	resp, err := rpcapi.ACLPolicyUpsert.Call(req.Context(), s.rpc, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{p}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

func (s *Server) aclPolicyDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.ACLPolicyDelete.Call(req.Context(), s.rpc, &structs.ACLPolicyDeleteRequest{Names: []string{req.PathValue("name")}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

func (s *Server) aclTokenList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLTokenList.Call(req.Context(), s.rpc, &structs.ACLTokenListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.ACLTokenListStub, 0, len(resp.Tokens))
	for _, t := range resp.Tokens {
		out = append(out, &api.ACLTokenListStub{
			AccessorID: t.AccessorID, Name: t.Name, Type: t.Type, Policies: slices.Clone(t.Policies), Roles: apiRoleLinks(t.Roles),
			Global: t.Global, CreateTime: t.CreateTime, ExpirationTime: t.ExpirationTime,
			CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex,
		})
	}
	return out, nil
}

func (s *Server) aclTokenGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLTokenGet.Call(req.Context(), s.rpc, &structs.ACLTokenSpecificRequest{AccessorID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiACLToken(resp.Token), nil
}

// aclTokenSelf is GET /v1/acl/token/self: the caller's token.
func (s *Server) aclTokenSelf(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLTokenSelf.Call(req.Context(), s.rpc, &structs.ACLTokenSpecificRequest{SecretID: requestToken(req), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiACLToken(resp.Token), nil
}

// aclTokenUpsert is PUT|POST /v1/acl/token (create) and
// /v1/acl/token/:id (update, or an upload of a new client token).
func (s *Server) aclTokenUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.ACLToken
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	id := req.PathValue("id")
	switch {
	case id == "" && body.AccessorID != "":
		return nil, structs.Invalid("Token cannot be created with an accessor ID: use /v1/acl/token/%s", body.AccessorID)
	case id != "" && body.AccessorID == "":
		body.AccessorID = id
	case id != "" && body.AccessorID != id:
		return nil, structs.Invalid("Token accessor ID does not match request path")
	}
	tok := &structs.ACLToken{
		AccessorID: body.AccessorID, SecretID: body.SecretID, Name: body.Name, Type: body.Type,
		Policies: slices.Clone(body.Policies), Global: body.Global, ExpirationTTL: body.ExpirationTTL,
		ExpirationTime: body.ExpirationTime,
	}
	for _, l := range body.Roles {
		if l != nil {
			tok.Roles = append(tok.Roles, &structs.ACLTokenRoleLink{ID: l.ID, Name: l.Name})
		}
	}
	resp, err := rpcapi.ACLTokenUpsert.Call(req.Context(), s.rpc, &structs.ACLTokenUpsertRequest{Token: tok})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return apiACLToken(resp.Token), nil
}

func (s *Server) aclTokenDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.ACLTokenDelete.Call(req.Context(), s.rpc, &structs.ACLTokenDeleteRequest{AccessorIDs: []string{req.PathValue("id")}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

func (s *Server) aclRoleList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLRoleList.Call(req.Context(), s.rpc, &structs.ACLRoleListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.ACLRoleListStub, 0, len(resp.Roles))
	for _, r := range resp.Roles {
		out = append(out, apiACLRole(r))
	}
	return out, nil
}

// aclRoleGet is GET /v1/acl/role/:id and /v1/acl/role/name/:name.
func (s *Server) aclRoleGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLRoleGet.Call(req.Context(), s.rpc, &structs.ACLRoleSpecificRequest{
		ID: req.PathValue("id"), Name: req.PathValue("name"), QueryOptions: opts,
	})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiACLRole(resp.Role), nil
}

// aclRoleUpsert is PUT|POST /v1/acl/role (create) and /v1/acl/role/:id
// (update).
func (s *Server) aclRoleUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.ACLRole
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	id := req.PathValue("id")
	switch {
	case id == "" && body.ID != "":
		return nil, structs.Invalid("Cannot specify ACL role ID when creating a role: use /v1/acl/role/%s", body.ID)
	case id != "" && body.ID == "":
		body.ID = id
	case id != "" && body.ID != id:
		return nil, structs.Invalid("Role ID does not match request path")
	}
	r := &structs.ACLRole{ID: body.ID, Name: body.Name, Description: body.Description}
	for _, p := range body.Policies {
		if p != nil {
			r.Policies = append(r.Policies, &structs.ACLRolePolicyLink{Name: p.Name})
		}
	}
	resp, err := rpcapi.ACLRoleUpsert.Call(req.Context(), s.rpc, &structs.ACLRoleUpsertRequest{Role: r})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return apiACLRole(resp.Role), nil
}

func (s *Server) aclRoleDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.ACLRoleDelete.Call(req.Context(), s.rpc, &structs.ACLRoleDeleteRequest{IDs: []string{req.PathValue("id")}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

func apiACLToken(t *structs.ACLToken) *api.ACLToken {
	if t == nil {
		return nil
	}
	return &api.ACLToken{
		AccessorID: t.AccessorID, SecretID: t.SecretID, Name: t.Name, Type: t.Type, Policies: slices.Clone(t.Policies),
		Roles: apiRoleLinks(t.Roles), Global: t.Global, CreateTime: t.CreateTime, ExpirationTime: t.ExpirationTime,
		ExpirationTTL: t.ExpirationTTL, CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex,
	}
}

func apiRoleLinks(in []*structs.ACLTokenRoleLink) []*api.ACLTokenRoleLink {
	out := make([]*api.ACLTokenRoleLink, 0, len(in))
	for _, l := range in {
		out = append(out, &api.ACLTokenRoleLink{ID: l.ID, Name: l.Name})
	}
	return out
}

func apiACLRole(r *structs.ACLRole) *api.ACLRole {
	if r == nil {
		return nil
	}
	out := &api.ACLRole{ID: r.ID, Name: r.Name, Description: r.Description, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, &api.ACLRolePolicyLink{Name: p.Name})
	}
	return out
}
