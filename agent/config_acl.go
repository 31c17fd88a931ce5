package agent

import "time"

// Default cache lifetimes of the acl block, as Nomad's.
const (
	defaultACLTokenTTL  = 30 * time.Second
	defaultACLPolicyTTL = 30 * time.Second
	defaultACLRoleTTL   = 30 * time.Second
)

// ACLConfig is the acl block (docs/acl.md).
type ACLConfig struct {
	// Enabled enforces ACLs on the HTTP API and the RPC port.
	Enabled bool
	// TokenTTL, PolicyTTL and RoleTTL bound how long an agent without a
	// server (a client) caches what a token resolved to; a server's cache
	// follows the replicated state instead.
	TokenTTL  time.Duration
	PolicyTTL time.Duration
	RoleTTL   time.Duration
}

// aclBlock is the acl block of a file.
type aclBlock struct {
	Enabled   *bool
	TokenTTL  *time.Duration
	PolicyTTL *time.Duration
	RoleTTL   *time.Duration
}

func (b *aclBlock) section() section {
	const p = "acl"
	return section{path: p, keys: map[string]keyFunc{
		"enabled":    boolKey(&b.Enabled, p),
		"token_ttl":  durationKey(&b.TokenTTL, p),
		"policy_ttl": durationKey(&b.PolicyTTL, p),
		"role_ttl":   durationKey(&b.RoleTTL, p),
	}}
}

func (c *Config) mergeACL(b *aclBlock) {
	setVal(&c.ACL.Enabled, b.Enabled)
	setVal(&c.ACL.TokenTTL, b.TokenTTL)
	setVal(&c.ACL.PolicyTTL, b.PolicyTTL)
	setVal(&c.ACL.RoleTTL, b.RoleTTL)
}

// cacheTTL is how long a client agent keeps a resolved token: the
// shortest of the three lifetimes, so that none is exceeded.
func (c ACLConfig) cacheTTL() time.Duration {
	return min(c.TokenTTL, c.PolicyTTL, c.RoleTTL)
}
