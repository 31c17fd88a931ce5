package structs

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Workload identities: the servers sign, for each task, a JSON Web Token
// (JWT) naming the task (IdentityClaims), with the signing key that the
// keyring's active root key derives. A task's identity blocks
// (TaskIdentity) say which tokens it gets and how it sees them.

// DefaultIdentityName is the name of a task's default identity: the one
// its unnamed identity block configures, and that every task has.
const DefaultIdentityName = "default"

// DefaultIdentityAudience is the audience of the default identity, as
// Nomad's.
const DefaultIdentityAudience = "nomadproject.io"

// IdentityAlgorithm is the JWS algorithm of workload identities: Ed25519
// signatures (RFC 8037).
const IdentityAlgorithm = "EdDSA"

// TaskIdentity is a task's identity block: which token it gets and
// whether it sees it in its environment (NOMAD_TOKEN or
// NOMAD_TOKEN_<name>) and in a file of its secrets directory
// (nomad_token or nomad_<name>.jwt).
type TaskIdentity struct {
	// Name is empty or DefaultIdentityName for the default identity.
	Name string
	// Audience is the token's "aud" claim; the default identity's is
	// DefaultIdentityAudience when empty.
	Audience []string
	Env      bool
	File     bool
	// Filepath overrides where File writes the token (relative to the
	// task directory).
	Filepath string
	// TTL is the token's lifetime: 0 means it does not expire (as
	// Nomad's default identity).
	TTL time.Duration
}

// IdentityName returns the identity's name, DefaultIdentityName for the
// unnamed one.
func (ti *TaskIdentity) IdentityName() string {
	if ti == nil || ti.Name == "" {
		return DefaultIdentityName
	}
	return ti.Name
}

// TaskIdentities returns every identity a task gets: the default one
// (configured by its unnamed identity block or, without one, neither in
// its environment nor in a file) first, then its named ones.
func TaskIdentities(t *Task) []*TaskIdentity {
	def := t.Identity
	if def == nil {
		def = &TaskIdentity{}
	}
	out := make([]*TaskIdentity, 0, 1+len(t.Identities))
	out = append(out, def)
	return append(out, t.Identities...)
}

// ValidateTaskIdentities checks a task's identity blocks: names unique
// and usable in a file name and an environment variable, TTLs not
// negative.
func ValidateTaskIdentities(t *Task) error {
	seen := map[string]bool{}
	for _, id := range TaskIdentities(t) {
		name := id.IdentityName()
		if seen[name] {
			return Invalid("task %q has two identity blocks named %q: give each a different name", t.Name, name)
		}
		seen[name] = true
		for _, r := range name {
			if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return Invalid("task %q: identity name %q may hold only letters, digits, '-' and '_'", t.Name, name)
			}
		}
		if id.TTL < 0 {
			return Invalid("task %q: identity %q has a negative ttl (%s)", t.Name, name, id.TTL)
		}
		if strings.Contains(id.Filepath, "..") {
			return Invalid("task %q: identity %q: filepath %q may not leave the task directory", t.Name, name, id.Filepath)
		}
	}
	return nil
}

// IdentityClaims are a workload identity's JWT claims, named as Nomad's.
type IdentityClaims struct {
	Namespace    string `json:"nomad_namespace"`
	JobID        string `json:"nomad_job_id"`
	AllocationID string `json:"nomad_allocation_id"`
	Task         string `json:"nomad_task"`
	// Group is not a Nomad claim name but is needed to scope variable
	// paths; Nomad puts it in "sub".
	Group string `json:"drover_group,omitempty"`
	// IdentityName is the identity the token was signed for.
	IdentityName string `json:"drover_identity,omitempty"`
	// Subject is "<region>:<namespace>:<job>:<group>:<task>:<identity>".
	Subject  string       `json:"sub"`
	Audience AudienceList `json:"aud,omitempty"`
	// IssuedAt, NotBefore and Expiry are Unix seconds; Expiry 0: none.
	IssuedAt  int64  `json:"iat"`
	NotBefore int64  `json:"nbf"`
	Expiry    int64  `json:"exp,omitempty"`
	JTI       string `json:"jti,omitempty"`
}

// AudienceList is a JWT "aud": a string or an array of strings on the
// wire (RFC 7519 4.1.3).
type AudienceList []string

// IdentitySubject returns the "sub" claim of a task's identity.
func IdentitySubject(region, namespace, jobID, group, task, identity string) string {
	return strings.Join([]string{region, namespace, jobID, group, task, identity}, ":")
}

// Workload returns the task the claims name, for WorkloadMayReadVariable.
func (c *IdentityClaims) Workload() WorkloadIdentity {
	return WorkloadIdentity{Namespace: c.Namespace, JobID: c.JobID, Group: c.Group, Task: c.Task}
}

// CheckTime reports an error when the claims are not valid at now: before
// nbf or at or after exp (with no leeway: the servers that sign also
// check).
func (c *IdentityClaims) CheckTime(now time.Time) error {
	sec := now.Unix()
	if c.NotBefore != 0 && sec < c.NotBefore {
		return NewError(KindPermission, "Permission denied: the workload identity is not valid before %s", time.Unix(c.NotBefore, 0).UTC().Format(time.RFC3339))
	}
	if c.Expiry != 0 && sec >= c.Expiry {
		return NewError(KindPermission, "Permission denied: the workload identity expired at %s", time.Unix(c.Expiry, 0).UTC().Format(time.RFC3339))
	}
	return nil
}

// LooksLikeJWT reports whether a token has a JWT's shape (three
// base64url parts joined by dots, the first a JSON object): such a bearer
// token is a workload identity, not an ACL token's secret (a UUID).
func LooksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && strings.HasPrefix(token, "eyJ")
}

// AllocSignIdentitiesRequest asks the servers, for a node, to sign the
// identities of a task of one of its allocations.
type AllocSignIdentitiesRequest struct {
	NodeID   string
	SecretID string
	AllocID  string
	Task     string
	// Identities are the names to sign; empty: all of the task's.
	Identities []string
	QueryOptions
}

// SignedIdentity is one signed token of a task.
type SignedIdentity struct {
	Name string
	JWT  string
	// Expiry is Unix seconds; 0: the token does not expire.
	Expiry int64
}

// AllocSignIdentitiesResponse returns the task's signed identities.
type AllocSignIdentitiesResponse struct {
	Identities []*SignedIdentity
	QueryMeta
}

// Workload operations a workload identity may be checked for
// (WorkloadOp.Kind).
const (
	// WorkloadOpVariableRead reads or lists the variable at Path.
	WorkloadOpVariableRead = "variable-read"
	// WorkloadOpVariableList lists variables of Namespace; the caller
	// filters the list with WorkloadMayReadVariable.
	WorkloadOpVariableList = "variable-list"
	// WorkloadOpServiceRead reads services of Namespace.
	WorkloadOpServiceRead = "service-read"
	// WorkloadOpOther is every other operation: a workload identity
	// alone grants none.
	WorkloadOpOther = "other"
)

// WorkloadOp is an operation a workload identity asks to do.
type WorkloadOp struct {
	Kind      string
	Namespace string
	// Path is the variable's (WorkloadOpVariableRead) or a description
	// of the operation, for errors.
	Path string
}

// String describes the operation for errors.
func (op WorkloadOp) String() string {
	return fmt.Sprintf("%s %q in namespace %q", op.Kind, op.Path, op.Namespace)
}

// IdentityAuthorizeRequest asks the servers to verify a workload identity
// and to check that it may do Op.
type IdentityAuthorizeRequest struct {
	Token string
	Op    WorkloadOp
	QueryOptions
}

// IdentityAuthorizeResponse returns the verified claims.
type IdentityAuthorizeResponse struct {
	Claims *IdentityClaims
	QueryMeta
}

// MarshalJSON writes one audience as a string, several as an array.
func (a AudienceList) MarshalJSON() ([]byte, error) {
	if len(a) == 1 {
		return json.Marshal(a[0])
	}
	return json.Marshal([]string(a))
}

// UnmarshalJSON reads a string or an array of strings.
func (a *AudienceList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = AudienceList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("aud is neither a string nor an array of strings: %w", err)
	}
	*a = many
	return nil
}

func copyTaskIdentity(ti *TaskIdentity) *TaskIdentity {
	if ti == nil {
		return nil
	}
	c := *ti
	c.Audience = append([]string(nil), ti.Audience...)
	return &c
}
