package structs

import "time"

// RegisteredClaims are the registered JWT claims (RFC 7519 4.1) the
// servers' node identities and client introduction tokens carry; times
// are Unix seconds.
type RegisteredClaims struct {
	Subject   string   `json:"sub"`
	Audience  []string `json:"aud"`
	IssuedAt  int64    `json:"iat"`
	NotBefore int64    `json:"nbf"`
	Expiry    int64    `json:"exp"`
	JTI       string   `json:"jti"`
}

// NewRegisteredClaims returns the registered claims of a token for
// subject, for drover's default audience, issued and valid from now,
// expiring after ttl, with a new ID.
func NewRegisteredClaims(subject string, now time.Time, ttl time.Duration) RegisteredClaims {
	return RegisteredClaims{
		Subject: subject, Audience: []string{DefaultIdentityAudience},
		IssuedAt: now.Unix(), NotBefore: now.Unix(), Expiry: now.Add(ttl).Unix(),
		JTI: GenerateUUID(),
	}
}

// NodeIdentityClaims are the claims of a node's identity: a JWT the
// servers sign with the keyring's active key (as workload identities), that
// names the node, its pool, class and datacenter, and expires after its
// pool's NodeIdentityTTL. The claim names are Nomad's.
type NodeIdentityClaims struct {
	NodeID         string `json:"nomad_node_id"`
	NodePool       string `json:"nomad_node_pool"`
	NodeClass      string `json:"nomad_node_class,omitempty"`
	NodeDatacenter string `json:"nomad_node_datacenter"`
	RegisteredClaims
}

// NodeIdentitySubject is the subject of a node's identity, as Nomad's:
// node:<region>:<pool>:<node ID>:default.
func NodeIdentitySubject(region, pool, nodeID string) string {
	return "node:" + region + ":" + pool + ":" + nodeID + ":default"
}

// NodeSignIdentityRequest asks the servers to sign a new identity for a
// node, authenticated by the node's secret.
type NodeSignIdentityRequest struct {
	NodeID   string
	SecretID string
	QueryOptions
}

// NodeSignIdentityResponse returns the node's new identity.
type NodeSignIdentityResponse struct {
	// JWT is the signed identity.
	JWT string
	// IssuedAt and Expiry are Unix seconds.
	IssuedAt int64
	Expiry   int64
	QueryMeta
}
