package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// ACLPolicy is a named policy document, as Nomad's.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	JobACL      *JobACL `json:",omitempty"`
	CreateIndex uint64
	ModifyIndex uint64
}

// JobACL is Nomad's attachment of a policy to a job (workload identity):
// accepted and kept empty by drover.
type JobACL struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// ACLPolicyListStub is a policy in a list.
type ACLPolicyListStub struct {
	Name        string
	Description string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLTokenRoleLink links a token to a role.
type ACLTokenRoleLink struct {
	ID   string
	Name string
}

// ACLToken is a token, as Nomad's: ExpirationTTL is a duration string
// ("1h0m0s") in JSON, read from a string or nanoseconds.
type ACLToken struct {
	AccessorID     string
	SecretID       string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time    `json:",omitempty"`
	ExpirationTTL  time.Duration `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// MarshalJSON writes ExpirationTTL as a duration string.
func (t *ACLToken) MarshalJSON() ([]byte, error) {
	type alias ACLToken
	out := &struct {
		ExpirationTTL string `json:",omitempty"`
		*alias
	}{alias: (*alias)(t)}
	if t.ExpirationTTL != 0 {
		out.ExpirationTTL = t.ExpirationTTL.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads ExpirationTTL from a duration string or a number of
// nanoseconds.
func (t *ACLToken) UnmarshalJSON(b []byte) error {
	type alias ACLToken
	aux := &struct {
		ExpirationTTL any
		*alias
	}{alias: (*alias)(t)}
	if err := json.Unmarshal(b, aux); err != nil {
		return err
	}
	switch v := aux.ExpirationTTL.(type) {
	case string:
		if v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			t.ExpirationTTL = d
		}
	case float64:
		t.ExpirationTTL = time.Duration(v)
	}
	return nil
}

// ACLTokenListStub is a token in a list (no secret).
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// ACLRolePolicyLink links a role to a policy.
type ACLRolePolicyLink struct {
	Name string
}

// ACLRole groups policies.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLRoleListStub is a role in a list.
type ACLRoleListStub = ACLRole

// BootstrapRequest is the body of /v1/acl/bootstrap.
type BootstrapRequest struct {
	BootstrapSecret string
}

// ACL returns the ACL endpoints.
func (c *Client) ACL() *ACL { return &ACL{c: c} }

// ACL is the ACL endpoints: bootstrap, policies, tokens and roles.
type ACL struct{ c *Client }

// Bootstrap creates the first management token (secret "" for a random
// one).
func (a *ACL) Bootstrap(secret string, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var out ACLToken
	var in any
	if secret != "" {
		in = &BootstrapRequest{BootstrapSecret: secret}
	}
	wm, err := a.c.write(http.MethodPut, "/v1/acl/bootstrap", in, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Policies lists the policies.
func (a *ACL) Policies(q *QueryOptions) ([]*ACLPolicyListStub, *QueryMeta, error) {
	var out []*ACLPolicyListStub
	qm, err := a.c.query("/v1/acl/policies", &out, q)
	return out, qm, err
}

// Policy reads one policy.
func (a *ACL) Policy(name string, q *QueryOptions) (*ACLPolicy, *QueryMeta, error) {
	var out ACLPolicy
	qm, err := a.c.query("/v1/acl/policy/"+url.PathEscape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// UpsertPolicy creates or updates a policy.
func (a *ACL) UpsertPolicy(p *ACLPolicy, w *WriteOptions) (*WriteMeta, error) {
	if p == nil || p.Name == "" {
		return nil, errors.New("missing policy name")
	}
	return a.c.write(http.MethodPut, "/v1/acl/policy/"+url.PathEscape(p.Name), p, nil, w)
}

// DeletePolicy deletes a policy.
func (a *ACL) DeletePolicy(name string, w *WriteOptions) (*WriteMeta, error) {
	return a.c.write(http.MethodDelete, "/v1/acl/policy/"+url.PathEscape(name), nil, nil, w)
}

// Tokens lists the tokens.
func (a *ACL) Tokens(q *QueryOptions) ([]*ACLTokenListStub, *QueryMeta, error) {
	var out []*ACLTokenListStub
	qm, err := a.c.query("/v1/acl/tokens", &out, q)
	return out, qm, err
}

// Token reads one token by accessor ID ("self": the caller's).
func (a *ACL) Token(accessor string, q *QueryOptions) (*ACLToken, *QueryMeta, error) {
	var out ACLToken
	qm, err := a.c.query("/v1/acl/token/"+url.PathEscape(accessor), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// CreateToken creates a token.
func (a *ACL) CreateToken(t *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var out ACLToken
	wm, err := a.c.write(http.MethodPut, "/v1/acl/token", t, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// UpdateToken updates a token.
func (a *ACL) UpdateToken(t *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	if t == nil || t.AccessorID == "" {
		return nil, nil, errors.New("missing accessor ID")
	}
	var out ACLToken
	wm, err := a.c.write(http.MethodPut, "/v1/acl/token/"+url.PathEscape(t.AccessorID), t, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// DeleteToken deletes a token.
func (a *ACL) DeleteToken(accessor string, w *WriteOptions) (*WriteMeta, error) {
	return a.c.write(http.MethodDelete, "/v1/acl/token/"+url.PathEscape(accessor), nil, nil, w)
}

// Roles lists the roles.
func (a *ACL) Roles(q *QueryOptions) ([]*ACLRoleListStub, *QueryMeta, error) {
	var out []*ACLRoleListStub
	qm, err := a.c.query("/v1/acl/roles", &out, q)
	return out, qm, err
}

// Role reads one role by ID.
func (a *ACL) Role(id string, q *QueryOptions) (*ACLRole, *QueryMeta, error) {
	var out ACLRole
	qm, err := a.c.query("/v1/acl/role/"+url.PathEscape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// RoleByName reads one role by name.
func (a *ACL) RoleByName(name string, q *QueryOptions) (*ACLRole, *QueryMeta, error) {
	var out ACLRole
	qm, err := a.c.query("/v1/acl/role/name/"+url.PathEscape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// CreateRole creates a role.
func (a *ACL) CreateRole(r *ACLRole, w *WriteOptions) (*ACLRole, *WriteMeta, error) {
	var out ACLRole
	wm, err := a.c.write(http.MethodPut, "/v1/acl/role", r, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// UpdateRole updates a role.
func (a *ACL) UpdateRole(r *ACLRole, w *WriteOptions) (*ACLRole, *WriteMeta, error) {
	if r == nil || r.ID == "" {
		return nil, nil, errors.New("missing role ID")
	}
	var out ACLRole
	wm, err := a.c.write(http.MethodPut, "/v1/acl/role/"+url.PathEscape(r.ID), r, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// DeleteRole deletes a role.
func (a *ACL) DeleteRole(id string, w *WriteOptions) (*WriteMeta, error) {
	return a.c.write(http.MethodDelete, "/v1/acl/role/"+url.PathEscape(id), nil, nil, w)
}
