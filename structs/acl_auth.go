package structs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The types of auth methods, as Nomad's.
const (
	// ACLAuthMethodTypeJWT validates a JWT the caller brings (acl login).
	ACLAuthMethodTypeJWT = "JWT"
	// ACLAuthMethodTypeOIDC is the browser flow of an OpenID Connect
	// provider: stored and listed, but its login is refused by drover.
	ACLAuthMethodTypeOIDC = "OIDC"
)

// The token localities of an auth method.
const (
	ACLAuthMethodTokenLocalityLocal  = "local"
	ACLAuthMethodTokenLocalityGlobal = "global"
)

// The bind types of a binding rule: what a matching rule gives the
// token a login makes.
const (
	ACLBindingRuleBindTypeRole       = "role"
	ACLBindingRuleBindTypePolicy     = "policy"
	ACLBindingRuleBindTypeManagement = "management"
)

// Bounds of one-time tokens and client introduction tokens.
const (
	// OneTimeTokenTTL is how long a one-time token may be exchanged.
	OneTimeTokenTTL = 10 * time.Minute
	// ClientIntroductionTokenDefaultTTL is the lifetime of a client
	// introduction token that asked for none.
	ClientIntroductionTokenDefaultTTL = 5 * time.Minute
	// ClientIntroductionTokenMaxTTL bounds the lifetime of one.
	ClientIntroductionTokenMaxTTL = 24 * time.Hour
)

// ACLAuthMethodConfig is how an auth method validates the credential of
// a login and maps its claims, with Nomad's field names.
type ACLAuthMethodConfig struct {
	// JWTValidationPubKeys are PEM public keys that may sign a JWT.
	JWTValidationPubKeys []string
	// JWKSURL is where the keys that may sign a JWT are published.
	JWKSURL string
	// JWKSCACert is a PEM CA certificate for JWKSURL's TLS.
	JWKSCACert          string
	OIDCDiscoveryURL    string
	OIDCClientID        string
	OIDCClientSecret    string
	OIDCEnablePKCE      bool
	OIDCDisableUserInfo bool
	OIDCScopes          []string
	// BoundAudiences: the JWT's "aud" must hold one of them (when set).
	BoundAudiences []string
	// BoundIssuer: the JWT's "iss" must be one of them (when set).
	BoundIssuer         []string
	AllowedRedirectURIs []string
	DiscoveryCaPem      []string
	// SigningAlgs are the JWS algorithms accepted; empty: RS256, ES256
	// and EdDSA (whichever the keys are).
	SigningAlgs      []string
	ExpirationLeeway time.Duration
	NotBeforeLeeway  time.Duration
	ClockSkewLeeway  time.Duration
	// ClaimMappings maps a claim to a name a selector reads as
	// value.<name>; ListClaimMappings a list claim to list.<name>.
	ClaimMappings     map[string]string
	ListClaimMappings map[string]string
	VerboseLogging    bool
}

// Copy returns a deep copy.
func (c *ACLAuthMethodConfig) Copy() *ACLAuthMethodConfig {
	if c == nil {
		return nil
	}
	o := *c
	o.JWTValidationPubKeys = slices.Clone(c.JWTValidationPubKeys)
	o.OIDCScopes = slices.Clone(c.OIDCScopes)
	o.BoundAudiences = slices.Clone(c.BoundAudiences)
	o.BoundIssuer = slices.Clone(c.BoundIssuer)
	o.AllowedRedirectURIs = slices.Clone(c.AllowedRedirectURIs)
	o.DiscoveryCaPem = slices.Clone(c.DiscoveryCaPem)
	o.SigningAlgs = slices.Clone(c.SigningAlgs)
	o.ClaimMappings = maps.Clone(c.ClaimMappings)
	o.ListClaimMappings = maps.Clone(c.ListClaimMappings)
	return &o
}

// ACLAuthMethod is a way to log in: it validates a credential from an
// identity provider and makes a token from the binding rules that match
// its claims.
type ACLAuthMethod struct {
	Name            string
	Type            string
	TokenLocality   string
	TokenNameFormat string
	// MaxTokenTTL is the lifetime of the tokens a login makes.
	MaxTokenTTL time.Duration
	// Default: the method `acl login` uses when none is named.
	Default     bool
	Config      *ACLAuthMethodConfig
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (m *ACLAuthMethod) Copy() *ACLAuthMethod {
	if m == nil {
		return nil
	}
	c := *m
	c.Config = m.Config.Copy()
	return &c
}

// Validate checks an auth method as written by a caller.
func (m *ACLAuthMethod) Validate() error {
	var errs []string
	if !validACLName.MatchString(m.Name) {
		errs = append(errs, fmt.Sprintf("invalid name %q: must match %s", m.Name, validACLName))
	}
	switch m.Type {
	case ACLAuthMethodTypeJWT, ACLAuthMethodTypeOIDC:
	default:
		errs = append(errs, fmt.Sprintf("invalid type %q: use JWT or OIDC", m.Type))
	}
	switch m.TokenLocality {
	case ACLAuthMethodTokenLocalityLocal, ACLAuthMethodTokenLocalityGlobal:
	default:
		errs = append(errs, fmt.Sprintf("invalid token locality %q: use local or global", m.TokenLocality))
	}
	if m.MaxTokenTTL < ACLTokenMinExpirationTTL || m.MaxTokenTTL > ACLTokenMaxExpirationTTL {
		errs = append(errs, fmt.Sprintf("invalid max token TTL %s: use between %s and %s",
			m.MaxTokenTTL, ACLTokenMinExpirationTTL, ACLTokenMaxExpirationTTL))
	}
	if m.Config == nil {
		errs = append(errs, "missing config")
	} else if m.Type == ACLAuthMethodTypeJWT {
		n := 0
		if len(m.Config.JWTValidationPubKeys) > 0 {
			n++
		}
		if m.Config.JWKSURL != "" {
			n++
		}
		if m.Config.OIDCDiscoveryURL != "" {
			n++
		}
		if n != 1 {
			errs = append(errs, "a JWT auth method needs exactly one of JWTValidationPubKeys, JWKSURL or OIDCDiscoveryURL")
		}
	}
	if len(errs) > 0 {
		return Invalid("invalid ACL auth method: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ACLBindingRule gives the tokens that logins through its auth method
// make a role, a policy or management, when its selector matches the
// login's claims.
type ACLBindingRule struct {
	ID          string
	Description string
	AuthMethod  string
	// Selector is a boolean expression over value.<name> and list.<name>
	// (the auth method's claim mappings); empty: every login.
	Selector string
	BindType string
	// BindName names the role or policy; it may interpolate
	// ${value.<name>}. Empty for management.
	BindName    string
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (r *ACLBindingRule) Copy() *ACLBindingRule {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// Validate checks a binding rule's fields (its selector is compiled by
// the server).
func (r *ACLBindingRule) Validate() error {
	var errs []string
	if r.AuthMethod == "" {
		errs = append(errs, "missing auth method")
	}
	if len(r.Description) > maxACLDescription {
		errs = append(errs, fmt.Sprintf("description longer than %d", maxACLDescription))
	}
	switch r.BindType {
	case ACLBindingRuleBindTypeRole, ACLBindingRuleBindTypePolicy:
		if r.BindName == "" {
			errs = append(errs, fmt.Sprintf("bind type %s needs a bind name", r.BindType))
		}
	case ACLBindingRuleBindTypeManagement:
		if r.BindName != "" {
			errs = append(errs, "bind type management takes no bind name")
		}
	default:
		errs = append(errs, fmt.Sprintf("invalid bind type %q: use role, policy or management", r.BindType))
	}
	if len(errs) > 0 {
		return Invalid("invalid ACL binding rule: %s", strings.Join(errs, "; "))
	}
	return nil
}

// OneTimeToken is a secret that may be exchanged once, before it
// expires, for the token that made it.
type OneTimeToken struct {
	OneTimeSecretID string
	AccessorID      string
	ExpiresAt       time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// Copy returns a copy.
func (t *OneTimeToken) Copy() *OneTimeToken {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// ACLAuthMethodUpsertRequest creates or updates auth methods.
type ACLAuthMethodUpsertRequest struct {
	AuthMethods []*ACLAuthMethod
	WriteRequest
}

// ACLAuthMethodUpsertResponse returns the auth methods written.
type ACLAuthMethodUpsertResponse struct {
	AuthMethods []*ACLAuthMethod
	WriteMeta
}

// ACLAuthMethodDeleteRequest deletes auth methods by name.
type ACLAuthMethodDeleteRequest struct {
	Names []string
	WriteRequest
}

// ACLAuthMethodListRequest lists auth methods (Prefix filters by name).
type ACLAuthMethodListRequest struct {
	QueryOptions
}

// ACLAuthMethodListResponse returns auth methods by name.
type ACLAuthMethodListResponse struct {
	AuthMethods []*ACLAuthMethod
	QueryMeta
}

// ACLAuthMethodGetRequest reads one auth method.
type ACLAuthMethodGetRequest struct {
	Name string
	QueryOptions
}

// ACLAuthMethodGetResponse returns one auth method.
type ACLAuthMethodGetResponse struct {
	AuthMethod *ACLAuthMethod
	QueryMeta
}

// ACLBindingRuleUpsertRequest creates (no ID) or updates binding rules.
type ACLBindingRuleUpsertRequest struct {
	BindingRules []*ACLBindingRule
	WriteRequest
}

// ACLBindingRuleUpsertResponse returns the binding rules written.
type ACLBindingRuleUpsertResponse struct {
	BindingRules []*ACLBindingRule
	WriteMeta
}

// ACLBindingRuleDeleteRequest deletes binding rules by ID.
type ACLBindingRuleDeleteRequest struct {
	IDs []string
	WriteRequest
}

// ACLBindingRuleListRequest lists binding rules (Prefix filters by ID).
type ACLBindingRuleListRequest struct {
	QueryOptions
}

// ACLBindingRuleListResponse returns binding rules by ID.
type ACLBindingRuleListResponse struct {
	BindingRules []*ACLBindingRule
	QueryMeta
}

// ACLBindingRuleGetRequest reads one binding rule.
type ACLBindingRuleGetRequest struct {
	ID string
	QueryOptions
}

// ACLBindingRuleGetResponse returns one binding rule.
type ACLBindingRuleGetResponse struct {
	BindingRule *ACLBindingRule
	QueryMeta
}

// ACLLoginRequest logs in with an auth method (empty: the default one)
// and a credential of its identity provider.
type ACLLoginRequest struct {
	AuthMethodName string
	LoginToken     string
	WriteRequest
}

// OneTimeTokenUpsertRequest makes a one-time token for the caller's
// token (SecretID; over the wire, the call's token).
type OneTimeTokenUpsertRequest struct {
	SecretID string
	WriteRequest
}

// OneTimeTokenUpsertResponse returns a one-time token.
type OneTimeTokenUpsertResponse struct {
	OneTimeToken *OneTimeToken
	WriteMeta
}

// OneTimeTokenExchangeRequest exchanges a one-time secret for its token.
type OneTimeTokenExchangeRequest struct {
	OneTimeSecretID string
	WriteRequest
}

// ACLPolicySelfRequest lists the policies the caller's token holds,
// directly and through its roles (SecretID; over the wire, the call's
// token).
type ACLPolicySelfRequest struct {
	SecretID string
	QueryOptions
}

// ClientIntroductionTokenRequest asks for a JWT that introduces a new
// client node (its name and pool become claims).
type ClientIntroductionTokenRequest struct {
	TTL      time.Duration
	NodeName string
	NodePool string
	WriteRequest
}

// ClientIntroductionTokenResponse returns the signed introduction JWT.
type ClientIntroductionTokenResponse struct {
	JWT string
	WriteMeta
}

// ClientIntroductionClaims are the claims of a client introduction JWT.
type ClientIntroductionClaims struct {
	NodeName string `json:"nomad_node_name,omitempty"`
	NodePool string `json:"nomad_node_pool"`
	RegisteredClaims
}
