package httpapi

import (
	"net/http"
	"slices"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerACLAuthRoutes adds the login endpoints, as Nomad's: auth
// methods, binding rules, login, one-time tokens, the policies of one's
// own token and client introduction tokens.
func (s *Server) registerACLAuthRoutes(rt *router) {
	write := []string{http.MethodPut, http.MethodPost}
	rt.handle("/v1/acl/auth-methods", s.wrap(s.aclAuthMethodList), http.MethodGet)
	rt.handle("/v1/acl/auth-method", s.wrap(s.aclAuthMethodUpsert), write...)
	rt.handle("/v1/acl/auth-method/{name}", s.wrap(s.aclAuthMethodGet), http.MethodGet)
	rt.handle("/v1/acl/auth-method/{name}", s.wrap(s.aclAuthMethodUpsert), write...)
	rt.handle("/v1/acl/auth-method/{name}", s.wrap(s.aclAuthMethodDelete), http.MethodDelete)
	rt.handle("/v1/acl/binding-rules", s.wrap(s.aclBindingRuleList), http.MethodGet)
	rt.handle("/v1/acl/binding-rule", s.wrap(s.aclBindingRuleUpsert), write...)
	rt.handle("/v1/acl/binding-rule/{id}", s.wrap(s.aclBindingRuleGet), http.MethodGet)
	rt.handle("/v1/acl/binding-rule/{id}", s.wrap(s.aclBindingRuleUpsert), write...)
	rt.handle("/v1/acl/binding-rule/{id}", s.wrap(s.aclBindingRuleDelete), http.MethodDelete)
	rt.handle("/v1/acl/login", s.wrap(s.aclLogin), write...)
	rt.handle("/v1/acl/oidc/auth-url", s.wrap(s.aclOIDCRefused), write...)
	rt.handle("/v1/acl/oidc/complete-auth", s.wrap(s.aclOIDCRefused), write...)
	rt.handle("/v1/acl/token/onetime", s.wrap(s.aclOneTimeTokenUpsert), write...)
	rt.handle("/v1/acl/token/onetime/exchange", s.wrap(s.aclOneTimeTokenExchange), write...)
	rt.handle("/v1/acl/policy/self", s.wrap(s.aclPolicySelf), http.MethodGet)
	rt.handle("/v1/acl/identity/client-introduction-token", s.wrap(s.aclClientIntroductionToken), write...)
}

func (s *Server) aclAuthMethodList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLAuthMethodList.Call(req.Context(), s.rpc, &structs.ACLAuthMethodListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.ACLAuthMethodListStub, 0, len(resp.AuthMethods))
	for _, m := range resp.AuthMethods {
		out = append(out, &api.ACLAuthMethodListStub{Name: m.Name, Type: m.Type, Default: m.Default, CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex})
	}
	return out, nil
}

func (s *Server) aclAuthMethodGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLAuthMethodGet.Call(req.Context(), s.rpc, &structs.ACLAuthMethodGetRequest{Name: req.PathValue("name"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiAuthMethod(resp.AuthMethod), nil
}

// aclAuthMethodUpsert is PUT|POST /v1/acl/auth-method (create) and
// /v1/acl/auth-method/:name (update): the body's name must be the path's
// (or empty).
func (s *Server) aclAuthMethodUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.ACLAuthMethod
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	if name := req.PathValue("name"); name != "" {
		switch body.Name {
		case "":
			body.Name = name
		case name:
		default:
			return nil, structs.Invalid("ACL auth method name %q does not match the request path %q", body.Name, name)
		}
	}
	resp, err := rpcapi.ACLAuthMethodUpsert.Call(req.Context(), s.rpc, &structs.ACLAuthMethodUpsertRequest{
		AuthMethods: []*structs.ACLAuthMethod{structsAuthMethod(&body)},
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	if len(resp.AuthMethods) == 0 {
		return nil, nil
	}
	return apiAuthMethod(resp.AuthMethods[0]), nil
}

func (s *Server) aclAuthMethodDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.ACLAuthMethodDelete.Call(req.Context(), s.rpc, &structs.ACLAuthMethodDeleteRequest{Names: []string{req.PathValue("name")}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

func (s *Server) aclBindingRuleList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLBindingRuleList.Call(req.Context(), s.rpc, &structs.ACLBindingRuleListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.ACLBindingRuleListStub, 0, len(resp.BindingRules))
	for _, r := range resp.BindingRules {
		out = append(out, &api.ACLBindingRuleListStub{ID: r.ID, Description: r.Description, AuthMethod: r.AuthMethod, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex})
	}
	return out, nil
}

func (s *Server) aclBindingRuleGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLBindingRuleGet.Call(req.Context(), s.rpc, &structs.ACLBindingRuleGetRequest{ID: req.PathValue("id"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiBindingRule(resp.BindingRule), nil
}

// aclBindingRuleUpsert is PUT|POST /v1/acl/binding-rule (create) and
// /v1/acl/binding-rule/:id (update).
func (s *Server) aclBindingRuleUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.ACLBindingRule
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	id := req.PathValue("id")
	switch {
	case id == "" && body.ID != "":
		return nil, structs.Invalid("cannot specify the binding rule's ID when creating it: use /v1/acl/binding-rule/%s", body.ID)
	case id != "" && body.ID == "":
		body.ID = id
	case id != "" && body.ID != id:
		return nil, structs.Invalid("binding rule ID %q does not match the request path %q", body.ID, id)
	}
	r := &structs.ACLBindingRule{
		ID: body.ID, Description: body.Description, AuthMethod: body.AuthMethod, Selector: body.Selector,
		BindType: body.BindType, BindName: body.BindName,
	}
	resp, err := rpcapi.ACLBindingRuleUpsert.Call(req.Context(), s.rpc, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{r}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	if len(resp.BindingRules) == 0 {
		return nil, nil
	}
	return apiBindingRule(resp.BindingRules[0]), nil
}

func (s *Server) aclBindingRuleDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.ACLBindingRuleDelete.Call(req.Context(), s.rpc, &structs.ACLBindingRuleDeleteRequest{IDs: []string{req.PathValue("id")}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

// aclLogin is PUT|POST /v1/acl/login: a JWT for a new token.
func (s *Server) aclLogin(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.ACLLoginRequest
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	var resp *structs.ACLTokenResponse
	err := s.limitGuesses(req, func() (err error) {
		resp, err = rpcapi.ACLLogin.Call(req.Context(), s.rpc, &structs.ACLLoginRequest{AuthMethodName: body.AuthMethodName, LoginToken: body.LoginToken})
		return err
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return apiACLToken(resp.Token), nil
}

// aclOIDCRefused answers the OIDC browser flow's endpoints.
func (s *Server) aclOIDCRefused(http.ResponseWriter, *http.Request) (any, error) {
	return nil, structs.Invalid("OIDC logins (the browser flow) are not supported by drover: use a JWT auth method and `acl login -method NAME -login-token JWT`")
}

// aclOneTimeTokenUpsert is PUT|POST /v1/acl/token/onetime: a one-time
// token for the request's token.
func (s *Server) aclOneTimeTokenUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.OneTimeTokenUpsert.Call(req.Context(), s.rpc, &structs.OneTimeTokenUpsertRequest{SecretID: requestToken(req)})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	t := resp.OneTimeToken
	return &api.OneTimeTokenUpsertResponse{OneTimeToken: &api.OneTimeToken{
		OneTimeSecretID: t.OneTimeSecretID, AccessorID: t.AccessorID, ExpiresAt: t.ExpiresAt, CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex,
	}}, nil
}

// aclOneTimeTokenExchange is PUT|POST /v1/acl/token/onetime/exchange.
func (s *Server) aclOneTimeTokenExchange(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.OneTimeTokenExchangeRequest
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	var resp *structs.ACLTokenResponse
	err := s.limitGuesses(req, func() (err error) {
		resp, err = rpcapi.OneTimeTokenExchange.Call(req.Context(), s.rpc, &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: body.OneTimeSecretID})
		return err
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.OneTimeTokenExchangeResponse{Token: apiACLToken(resp.Token)}, nil
}

// aclPolicySelf is GET /v1/acl/policy/self: the policies the request's
// token holds.
func (s *Server) aclPolicySelf(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ACLPolicySelf.Call(req.Context(), s.rpc, &structs.ACLPolicySelfRequest{SecretID: requestToken(req), QueryOptions: opts})
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

// aclClientIntroductionToken is PUT|POST
// /v1/acl/identity/client-introduction-token.
func (s *Server) aclClientIntroductionToken(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.ACLIdentityClientIntroductionTokenRequest
	if req.ContentLength != 0 {
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
	}
	resp, err := rpcapi.ClientIntroductionToken.Call(req.Context(), s.rpc, &structs.ClientIntroductionTokenRequest{
		TTL: body.TTL, NodeName: body.NodeName, NodePool: body.NodePool,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &api.ACLIdentityClientIntroductionTokenResponse{JWT: resp.JWT}, nil
}

func structsAuthMethod(m *api.ACLAuthMethod) *structs.ACLAuthMethod {
	out := &structs.ACLAuthMethod{
		Name: m.Name, Type: m.Type, TokenLocality: m.TokenLocality, TokenNameFormat: m.TokenNameFormat,
		MaxTokenTTL: m.MaxTokenTTL, Default: m.Default,
	}
	if c := m.Config; c != nil {
		out.Config = &structs.ACLAuthMethodConfig{
			JWTValidationPubKeys: slices.Clone(c.JWTValidationPubKeys), JWKSURL: c.JWKSURL, JWKSCACert: c.JWKSCACert,
			OIDCDiscoveryURL: c.OIDCDiscoveryURL, OIDCClientID: c.OIDCClientID, OIDCClientSecret: c.OIDCClientSecret,
			OIDCEnablePKCE: c.OIDCEnablePKCE, OIDCDisableUserInfo: c.OIDCDisableUserInfo, OIDCScopes: slices.Clone(c.OIDCScopes),
			BoundAudiences: slices.Clone(c.BoundAudiences), BoundIssuer: slices.Clone(c.BoundIssuer),
			AllowedRedirectURIs: slices.Clone(c.AllowedRedirectURIs), DiscoveryCaPem: slices.Clone(c.DiscoveryCaPem),
			SigningAlgs: slices.Clone(c.SigningAlgs), ExpirationLeeway: c.ExpirationLeeway, NotBeforeLeeway: c.NotBeforeLeeway,
			ClockSkewLeeway: c.ClockSkewLeeway, ClaimMappings: c.ClaimMappings, ListClaimMappings: c.ListClaimMappings,
			VerboseLogging: c.VerboseLogging,
		}
	}
	return out
}

func apiAuthMethod(m *structs.ACLAuthMethod) *api.ACLAuthMethod {
	if m == nil {
		return nil
	}
	out := &api.ACLAuthMethod{
		Name: m.Name, Type: m.Type, TokenLocality: m.TokenLocality, TokenNameFormat: m.TokenNameFormat,
		MaxTokenTTL: m.MaxTokenTTL, Default: m.Default, CreateTime: m.CreateTime, ModifyTime: m.ModifyTime,
		CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex,
	}
	if c := m.Config.Copy(); c != nil {
		out.Config = &api.ACLAuthMethodConfig{
			JWTValidationPubKeys: c.JWTValidationPubKeys, JWKSURL: c.JWKSURL, JWKSCACert: c.JWKSCACert,
			OIDCDiscoveryURL: c.OIDCDiscoveryURL, OIDCClientID: c.OIDCClientID, OIDCClientSecret: c.OIDCClientSecret,
			OIDCEnablePKCE: c.OIDCEnablePKCE, OIDCDisableUserInfo: c.OIDCDisableUserInfo, OIDCScopes: c.OIDCScopes,
			BoundAudiences: c.BoundAudiences, BoundIssuer: c.BoundIssuer, AllowedRedirectURIs: c.AllowedRedirectURIs,
			DiscoveryCaPem: c.DiscoveryCaPem, SigningAlgs: c.SigningAlgs, ExpirationLeeway: c.ExpirationLeeway,
			NotBeforeLeeway: c.NotBeforeLeeway, ClockSkewLeeway: c.ClockSkewLeeway, ClaimMappings: c.ClaimMappings,
			ListClaimMappings: c.ListClaimMappings, VerboseLogging: c.VerboseLogging,
		}
	}
	return out
}

func apiBindingRule(r *structs.ACLBindingRule) *api.ACLBindingRule {
	if r == nil {
		return nil
	}
	return &api.ACLBindingRule{
		ID: r.ID, Description: r.Description, AuthMethod: r.AuthMethod, Selector: r.Selector, BindType: r.BindType,
		BindName: r.BindName, CreateTime: r.CreateTime, ModifyTime: r.ModifyTime, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex,
	}
}
