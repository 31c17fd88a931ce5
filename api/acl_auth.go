package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// ACLAuthMethodConfig is how an auth method validates a login's JWT and
// maps its claims, as Nomad's; the leeways are duration strings in JSON.
type ACLAuthMethodConfig struct {
	JWTValidationPubKeys []string
	JWKSURL              string
	JWKSCACert           string
	OIDCDiscoveryURL     string
	OIDCClientID         string
	OIDCClientSecret     string
	OIDCEnablePKCE       bool
	OIDCDisableUserInfo  bool
	OIDCScopes           []string
	BoundAudiences       []string
	BoundIssuer          []string
	AllowedRedirectURIs  []string
	DiscoveryCaPem       []string
	SigningAlgs          []string
	ExpirationLeeway     time.Duration
	NotBeforeLeeway      time.Duration
	ClockSkewLeeway      time.Duration
	ClaimMappings        map[string]string
	ListClaimMappings    map[string]string
	VerboseLogging       bool
}

// MarshalJSON writes the leeways as duration strings.
func (c *ACLAuthMethodConfig) MarshalJSON() ([]byte, error) {
	type alias ACLAuthMethodConfig
	return json.Marshal(&struct {
		ExpirationLeeway string
		NotBeforeLeeway  string
		ClockSkewLeeway  string
		*alias
	}{durationString(c.ExpirationLeeway), durationString(c.NotBeforeLeeway), durationString(c.ClockSkewLeeway), (*alias)(c)})
}

// UnmarshalJSON reads the leeways from duration strings or nanoseconds.
func (c *ACLAuthMethodConfig) UnmarshalJSON(b []byte) error {
	type alias ACLAuthMethodConfig
	aux := &struct {
		ExpirationLeeway any
		NotBeforeLeeway  any
		ClockSkewLeeway  any
		*alias
	}{alias: (*alias)(c)}
	if err := json.Unmarshal(b, aux); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    any
		out  *time.Duration
	}{{"ExpirationLeeway", aux.ExpirationLeeway, &c.ExpirationLeeway}, {"NotBeforeLeeway", aux.NotBeforeLeeway, &c.NotBeforeLeeway}, {"ClockSkewLeeway", aux.ClockSkewLeeway, &c.ClockSkewLeeway}} {
		d, err := parseDurationValue(f.v)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		*f.out = d
	}
	return nil
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func parseDurationValue(v any) (time.Duration, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case string:
		if x == "" {
			return 0, nil
		}
		return time.ParseDuration(x)
	case float64:
		return time.Duration(x), nil
	}
	return 0, fmt.Errorf("not a duration: %v", v)
}

// ACLAuthMethod is a way to log in, as Nomad's: MaxTokenTTL is a duration
// string in JSON.
type ACLAuthMethod struct {
	Name            string
	Type            string
	TokenLocality   string
	TokenNameFormat string
	MaxTokenTTL     time.Duration
	Default         bool
	Config          *ACLAuthMethodConfig
	CreateTime      time.Time
	ModifyTime      time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// MarshalJSON writes MaxTokenTTL as a duration string.
func (m *ACLAuthMethod) MarshalJSON() ([]byte, error) {
	type alias ACLAuthMethod
	return json.Marshal(&struct {
		MaxTokenTTL string
		*alias
	}{durationString(m.MaxTokenTTL), (*alias)(m)})
}

// UnmarshalJSON reads MaxTokenTTL from a duration string or nanoseconds.
func (m *ACLAuthMethod) UnmarshalJSON(b []byte) error {
	type alias ACLAuthMethod
	aux := &struct {
		MaxTokenTTL any
		*alias
	}{alias: (*alias)(m)}
	if err := json.Unmarshal(b, aux); err != nil {
		return err
	}
	d, err := parseDurationValue(aux.MaxTokenTTL)
	if err != nil {
		return fmt.Errorf("MaxTokenTTL: %w", err)
	}
	m.MaxTokenTTL = d
	return nil
}

// ACLAuthMethodListStub is an auth method in a list.
type ACLAuthMethodListStub struct {
	Name        string
	Type        string
	Default     bool
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLBindingRule maps a login's claims to a role, a policy or management.
type ACLBindingRule struct {
	ID          string
	Description string
	AuthMethod  string
	Selector    string
	BindType    string
	BindName    string
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLBindingRuleListStub is a binding rule in a list.
type ACLBindingRuleListStub struct {
	ID          string
	Description string
	AuthMethod  string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLLoginRequest is the body of /v1/acl/login.
type ACLLoginRequest struct {
	AuthMethodName string
	LoginToken     string
}

// OneTimeToken is a secret exchangeable once for the token that made it.
type OneTimeToken struct {
	OneTimeSecretID string
	AccessorID      string
	ExpiresAt       time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// OneTimeTokenUpsertResponse is the answer of /v1/acl/token/onetime.
type OneTimeTokenUpsertResponse struct {
	OneTimeToken *OneTimeToken
}

// OneTimeTokenExchangeRequest is the body of
// /v1/acl/token/onetime/exchange.
type OneTimeTokenExchangeRequest struct {
	OneTimeSecretID string
}

// OneTimeTokenExchangeResponse is its answer.
type OneTimeTokenExchangeResponse struct {
	Token *ACLToken
}

// ACLIdentityClientIntroductionTokenRequest is the body of
// /v1/acl/identity/client-introduction-token.
type ACLIdentityClientIntroductionTokenRequest struct {
	TTL      time.Duration
	NodeName string
	NodePool string
}

// ACLIdentityClientIntroductionTokenResponse is its answer.
type ACLIdentityClientIntroductionTokenResponse struct {
	JWT string
}

var errMissingName = errors.New("missing name")

// AuthMethods lists the auth methods.
func (a *ACL) AuthMethods(q *QueryOptions) ([]*ACLAuthMethodListStub, *QueryMeta, error) {
	var out []*ACLAuthMethodListStub
	qm, err := a.c.query("/v1/acl/auth-methods", &out, q)
	return out, qm, err
}

// AuthMethod reads one auth method.
func (a *ACL) AuthMethod(name string, q *QueryOptions) (*ACLAuthMethod, *QueryMeta, error) {
	var out ACLAuthMethod
	qm, err := a.c.query("/v1/acl/auth-method/"+url.PathEscape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// CreateAuthMethod creates an auth method.
func (a *ACL) CreateAuthMethod(m *ACLAuthMethod, w *WriteOptions) (*ACLAuthMethod, *WriteMeta, error) {
	var out ACLAuthMethod
	wm, err := a.c.write(http.MethodPut, "/v1/acl/auth-method", m, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// UpdateAuthMethod updates an auth method.
func (a *ACL) UpdateAuthMethod(m *ACLAuthMethod, w *WriteOptions) (*ACLAuthMethod, *WriteMeta, error) {
	if m == nil || m.Name == "" {
		return nil, nil, errMissingName
	}
	var out ACLAuthMethod
	wm, err := a.c.write(http.MethodPut, "/v1/acl/auth-method/"+url.PathEscape(m.Name), m, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// DeleteAuthMethod deletes an auth method and its binding rules.
func (a *ACL) DeleteAuthMethod(name string, w *WriteOptions) (*WriteMeta, error) {
	return a.c.write(http.MethodDelete, "/v1/acl/auth-method/"+url.PathEscape(name), nil, nil, w)
}

// BindingRules lists the binding rules.
func (a *ACL) BindingRules(q *QueryOptions) ([]*ACLBindingRuleListStub, *QueryMeta, error) {
	var out []*ACLBindingRuleListStub
	qm, err := a.c.query("/v1/acl/binding-rules", &out, q)
	return out, qm, err
}

// BindingRule reads one binding rule.
func (a *ACL) BindingRule(id string, q *QueryOptions) (*ACLBindingRule, *QueryMeta, error) {
	var out ACLBindingRule
	qm, err := a.c.query("/v1/acl/binding-rule/"+url.PathEscape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// CreateBindingRule creates a binding rule.
func (a *ACL) CreateBindingRule(r *ACLBindingRule, w *WriteOptions) (*ACLBindingRule, *WriteMeta, error) {
	var out ACLBindingRule
	wm, err := a.c.write(http.MethodPut, "/v1/acl/binding-rule", r, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// UpdateBindingRule updates a binding rule.
func (a *ACL) UpdateBindingRule(r *ACLBindingRule, w *WriteOptions) (*ACLBindingRule, *WriteMeta, error) {
	if r == nil || r.ID == "" {
		return nil, nil, errors.New("missing binding rule ID")
	}
	var out ACLBindingRule
	wm, err := a.c.write(http.MethodPut, "/v1/acl/binding-rule/"+url.PathEscape(r.ID), r, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// DeleteBindingRule deletes a binding rule.
func (a *ACL) DeleteBindingRule(id string, w *WriteOptions) (*WriteMeta, error) {
	return a.c.write(http.MethodDelete, "/v1/acl/binding-rule/"+url.PathEscape(id), nil, nil, w)
}

// Login exchanges an identity provider's JWT for a new token.
func (a *ACL) Login(req *ACLLoginRequest, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var out ACLToken
	wm, err := a.c.write(http.MethodPut, "/v1/acl/login", req, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// PoliciesSelf lists the policies the client's token holds.
func (a *ACL) PoliciesSelf(q *QueryOptions) ([]*ACLPolicyListStub, *QueryMeta, error) {
	var out []*ACLPolicyListStub
	qm, err := a.c.query("/v1/acl/policy/self", &out, q)
	return out, qm, err
}

// CreateOneTimeToken makes a one-time token for the client's token.
func (a *ACL) CreateOneTimeToken(w *WriteOptions) (*OneTimeToken, *WriteMeta, error) {
	var out OneTimeTokenUpsertResponse
	wm, err := a.c.write(http.MethodPut, "/v1/acl/token/onetime", nil, &out, w)
	if err != nil {
		return nil, nil, err
	}
	if out.OneTimeToken == nil {
		return nil, nil, errors.New("no one-time token returned")
	}
	return out.OneTimeToken, wm, nil
}

// ExchangeOneTimeToken trades a one-time secret for its token, once.
func (a *ACL) ExchangeOneTimeToken(secret string, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var out OneTimeTokenExchangeResponse
	wm, err := a.c.write(http.MethodPut, "/v1/acl/token/onetime/exchange", &OneTimeTokenExchangeRequest{OneTimeSecretID: secret}, &out, w)
	if err != nil {
		return nil, nil, err
	}
	if out.Token == nil {
		return nil, nil, errors.New("no ACL token returned")
	}
	return out.Token, wm, nil
}
