package structs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The types of ACL tokens.
const (
	// ACLClientToken is granted what its policies and roles allow.
	ACLClientToken = "client"
	// ACLManagementToken is granted everything.
	ACLManagementToken = "management"
	// AnonymousPolicyName is the policy of requests without a token.
	AnonymousPolicyName = "anonymous"
)

// ACL token expiry bounds, as Nomad's defaults.
const (
	ACLTokenMinExpirationTTL = time.Minute
	ACLTokenMaxExpirationTTL = 24 * time.Hour
)

var validACLName = regexp.MustCompile("^[a-zA-Z0-9-]{1,128}$")

const maxACLDescription = 256

// ACLPolicy is a named policy document (Rules in the package acl rule
// language).
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (p *ACLPolicy) Copy() *ACLPolicy {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Validate checks the policy's name and description; the rules are parsed
// by the server (package acl).
func (p *ACLPolicy) Validate() error {
	var errs []string
	if !validACLName.MatchString(p.Name) {
		errs = append(errs, fmt.Sprintf("invalid name %q: must match %s", p.Name, validACLName))
	}
	if len(p.Description) > maxACLDescription {
		errs = append(errs, fmt.Sprintf("description longer than %d", maxACLDescription))
	}
	if len(errs) > 0 {
		return Invalid("invalid ACL policy: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ACLTokenRoleLink links a token to a role, by ID (or by name on input).
type ACLTokenRoleLink struct {
	ID   string
	Name string
}

// ACLToken is a bearer credential: SecretID authenticates, AccessorID
// names it in lists and logs.
type ACLToken struct {
	AccessorID string
	SecretID   string
	Name       string
	Type       string
	Policies   []string
	Roles      []*ACLTokenRoleLink
	Global     bool
	CreateTime time.Time
	// ExpirationTime is when the token stops working; nil: never.
	ExpirationTime *time.Time
	// ExpirationTTL sets ExpirationTime at creation (CreateTime + TTL).
	ExpirationTTL time.Duration
	CreateIndex   uint64
	ModifyIndex   uint64
}

// Copy returns a deep copy.
func (t *ACLToken) Copy() *ACLToken {
	if t == nil {
		return nil
	}
	c := *t
	c.Policies = slices.Clone(t.Policies)
	c.Roles = nil
	for _, r := range t.Roles {
		if r != nil {
			l := *r
			c.Roles = append(c.Roles, &l)
		}
	}
	if t.ExpirationTime != nil {
		e := *t.ExpirationTime
		c.ExpirationTime = &e
	}
	return &c
}

// IsManagement reports whether the token is a management token.
func (t *ACLToken) IsManagement() bool { return t != nil && t.Type == ACLManagementToken }

// IsExpired reports whether the token has expired at now.
func (t *ACLToken) IsExpired(now time.Time) bool {
	return t != nil && t.ExpirationTime != nil && !now.Before(*t.ExpirationTime)
}

// Validate checks a token as written by a caller (existing: the stored
// token it updates, nil for a new one).
func (t *ACLToken) Validate(existing *ACLToken) error {
	var errs []string
	if len(t.Name) > maxACLDescription {
		errs = append(errs, fmt.Sprintf("name longer than %d", maxACLDescription))
	}
	switch t.Type {
	case ACLClientToken:
		if len(t.Policies) == 0 && len(t.Roles) == 0 {
			errs = append(errs, "a client token needs at least one policy or role")
		}
	case ACLManagementToken:
		if len(t.Policies) != 0 || len(t.Roles) != 0 {
			errs = append(errs, "a management token takes no policies or roles")
		}
	default:
		errs = append(errs, fmt.Sprintf("invalid token type %q: use client or management", t.Type))
	}
	if existing == nil && t.ExpirationTTL != 0 {
		if t.ExpirationTTL < ACLTokenMinExpirationTTL || t.ExpirationTTL > ACLTokenMaxExpirationTTL {
			errs = append(errs, fmt.Sprintf("expiration TTL %s out of bounds: use between %s and %s",
				t.ExpirationTTL, ACLTokenMinExpirationTTL, ACLTokenMaxExpirationTTL))
		}
	}
	if existing != nil && t.ExpirationTTL != 0 {
		errs = append(errs, "cannot update expiration TTL")
	}
	if existing != nil && existing.Type != t.Type {
		errs = append(errs, "cannot change the token type")
	}
	if len(errs) > 0 {
		return Invalid("invalid ACL token: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ACLRolePolicyLink links a role to a policy by name.
type ACLRolePolicyLink struct {
	Name string
}

// ACLRole groups policies; a token linked to it gets them.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (r *ACLRole) Copy() *ACLRole {
	if r == nil {
		return nil
	}
	c := *r
	c.Policies = nil
	for _, p := range r.Policies {
		if p != nil {
			l := *p
			c.Policies = append(c.Policies, &l)
		}
	}
	return &c
}

// PolicyNames returns the names of the role's policies.
func (r *ACLRole) PolicyNames() []string {
	out := make([]string, 0, len(r.Policies))
	for _, p := range r.Policies {
		if p != nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// Validate checks the role's name, description and policy links.
func (r *ACLRole) Validate() error {
	var errs []string
	if !validACLName.MatchString(r.Name) {
		errs = append(errs, fmt.Sprintf("invalid name %q: must match %s", r.Name, validACLName))
	}
	if len(r.Description) > maxACLDescription {
		errs = append(errs, fmt.Sprintf("description longer than %d", maxACLDescription))
	}
	if len(r.PolicyNames()) == 0 {
		errs = append(errs, "at least one policy must be specified")
	}
	if len(errs) > 0 {
		return Invalid("invalid ACL role: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ACLState is the cluster's ACL bookkeeping, replicated with the rest.
type ACLState struct {
	// BootstrapIndex is the index of the bootstrap; 0: not bootstrapped.
	BootstrapIndex uint64
	// ServerSecret authenticates calls between servers (scheduler workers
	// to the leader) when ACLs are enabled; the leader sets it once.
	ServerSecret string
}

// ACLBootstrapRequest bootstraps the ACL system: it creates the first
// management token, once (or again with ResetIndex set to the index of
// the last bootstrap: the reset path).
type ACLBootstrapRequest struct {
	// ResetIndex allows a new bootstrap when it equals the last
	// bootstrap's index (read from the data dir's acl-bootstrap-reset
	// file by the server).
	ResetIndex uint64
	// BootstrapSecret is the management token's SecretID; empty: random.
	BootstrapSecret string
	WriteRequest
}

// ACLTokenResponse returns one token after a write.
type ACLTokenResponse struct {
	Token *ACLToken
	WriteMeta
}

// ACLPolicyUpsertRequest creates or updates policies.
type ACLPolicyUpsertRequest struct {
	Policies []*ACLPolicy
	WriteRequest
}

// ACLPolicyDeleteRequest deletes policies by name.
type ACLPolicyDeleteRequest struct {
	Names []string
	WriteRequest
}

// ACLWriteResponse answers an ACL write that returns nothing else.
type ACLWriteResponse struct {
	WriteMeta
}

// ACLPolicyListRequest lists policies (Prefix filters by name).
type ACLPolicyListRequest struct {
	QueryOptions
}

// ACLPolicyListResponse returns policies by name.
type ACLPolicyListResponse struct {
	Policies []*ACLPolicy
	QueryMeta
}

// ACLPolicySpecificRequest reads one policy.
type ACLPolicySpecificRequest struct {
	Name string
	QueryOptions
}

// SingleACLPolicyResponse returns one policy.
type SingleACLPolicyResponse struct {
	Policy *ACLPolicy
	QueryMeta
}

// ACLTokenUpsertRequest creates (AccessorID empty, or a new one with its
// SecretID: an upload) or updates a token.
type ACLTokenUpsertRequest struct {
	Token *ACLToken
	WriteRequest
}

// ACLTokenDeleteRequest deletes tokens by accessor ID.
type ACLTokenDeleteRequest struct {
	AccessorIDs []string
	WriteRequest
}

// ACLTokenListRequest lists tokens (Prefix filters by accessor ID).
type ACLTokenListRequest struct {
	QueryOptions
}

// ACLTokenListResponse returns tokens (their SecretIDs cleared).
type ACLTokenListResponse struct {
	Tokens []*ACLToken
	QueryMeta
}

// ACLTokenSpecificRequest reads one token by accessor ID, or by secret ID
// (token self).
type ACLTokenSpecificRequest struct {
	AccessorID string
	SecretID   string
	QueryOptions
}

// SingleACLTokenResponse returns one token.
type SingleACLTokenResponse struct {
	Token *ACLToken
	QueryMeta
}

// ACLRoleUpsertRequest creates (ID empty) or updates a role.
type ACLRoleUpsertRequest struct {
	Role *ACLRole
	WriteRequest
}

// ACLRoleResponse returns one role after a write.
type ACLRoleResponse struct {
	Role *ACLRole
	WriteMeta
}

// ACLRoleDeleteRequest deletes roles by ID.
type ACLRoleDeleteRequest struct {
	IDs []string
	WriteRequest
}

// ACLRoleListRequest lists roles (Prefix filters by name).
type ACLRoleListRequest struct {
	QueryOptions
}

// ACLRoleListResponse returns roles by name.
type ACLRoleListResponse struct {
	Roles []*ACLRole
	QueryMeta
}

// ACLRoleSpecificRequest reads one role by ID, or by Name.
type ACLRoleSpecificRequest struct {
	ID   string
	Name string
	QueryOptions
}

// SingleACLRoleResponse returns one role.
type SingleACLRoleResponse struct {
	Role *ACLRole
	QueryMeta
}

// ACLResolveRequest resolves a secret ID ("" for anonymous) to what it
// grants.
type ACLResolveRequest struct {
	SecretID string
	QueryOptions
}

// ACLResolveResponse returns a token (nil for anonymous) and the policies
// it holds, directly and through its roles; Index is the ACL tables'
// index, which changes whenever a token, policy or role does.
type ACLResolveResponse struct {
	Token    *ACLToken
	Policies []*ACLPolicy
	QueryMeta
}
