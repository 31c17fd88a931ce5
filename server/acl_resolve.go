package server

import (
	"context"
	"crypto/subtle"
	"slices"
	"sync"
	"time"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// maxACLCache bounds the resolved tokens kept; past it the cache starts
// over.
const maxACLCache = 4096

// Errors of token resolution, worded as Nomad's.
var (
	errTokenNotFound = structs.NewError(structs.KindPermission, "ACL token not found")
	errTokenExpired  = structs.NewError(structs.KindPermission, "ACL token expired")
	errPermission    = structs.NewError(structs.KindPermission, "Permission denied")
)

// resolveToken looks a secret up in the state: its token (nil for
// anonymous) and its policies, directly and through its roles.
func resolveToken(st *state.StateStore, secret string, now time.Time) (*structs.ACLToken, []*structs.ACLPolicy, error) {
	if secret == "" {
		p, err := st.ACLPolicyByName(nil, structs.AnonymousPolicyName)
		if err != nil || p == nil {
			return nil, nil, err
		}
		return nil, []*structs.ACLPolicy{p}, nil
	}
	tok, err := st.ACLTokenBySecret(nil, secret)
	if err != nil {
		return nil, nil, err
	}
	if tok == nil {
		// A node's own reads (templates, service discovery, the
		// migration of a previous allocation) present its secret ID.
		node, err := st.NodeBySecret(nil, secret)
		if err != nil {
			return nil, nil, err
		}
		if node == nil || !secretMatches(node.SecretID, secret) {
			return nil, nil, errTokenNotFound
		}
		return &structs.ACLToken{AccessorID: node.ID, Name: "node " + node.Name, Type: structs.ACLClientToken},
			[]*structs.ACLPolicy{{Name: "node-" + node.ID, Rules: nodeRules}}, nil
	}
	if tok.IsExpired(now) {
		return nil, nil, errTokenExpired
	}
	if tok.IsManagement() {
		return tok, nil, nil
	}
	names := slices.Clone(tok.Policies)
	for _, link := range tok.Roles {
		r, err := st.ACLRoleByID(nil, link.ID)
		if err != nil {
			return nil, nil, err
		}
		if r != nil { // a deleted role grants nothing
			names = append(names, r.PolicyNames()...)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var pols []*structs.ACLPolicy
	for _, n := range names {
		p, err := st.ACLPolicyByName(nil, n)
		if err != nil {
			return nil, nil, err
		}
		if p != nil { // a deleted policy grants nothing
			pols = append(pols, p)
		}
	}
	return tok, pols, nil
}

// CompileACL merges a token's policies into an ACL (a management token's
// allows everything). Stored policies parsed when written; one that no
// longer parses grants nothing.
func CompileACL(tok *structs.ACLToken, pols []*structs.ACLPolicy) *acl.ACL {
	if tok.IsManagement() {
		return acl.ManagementACL()
	}
	parsed := make([]*acl.Policy, 0, len(pols))
	for _, p := range pols {
		if pp, err := acl.Parse(p.Name, p.Rules); err == nil {
			parsed = append(parsed, pp)
		}
	}
	return acl.New(parsed...)
}

// aclCache keeps resolved tokens, by secret, for one version of the ACL
// tables: any change of a token, policy or role (one of the watch
// channels closes), or a restored state, starts it over.
type aclCache struct {
	mu      sync.Mutex // guards the fields below
	store   *state.StateStore
	watch   []<-chan struct{}
	entries map[string]*resolvedToken
	// gen counts the starts over, so that a resolution read in one
	// generation is not cached in the next.
	gen uint64
}

// valid reports whether the cache still holds for st: the same store, and
// no ACL table changed since it started.
func (c *aclCache) valid(st *state.StateStore) bool {
	if c.store != st || c.entries == nil || len(c.entries) >= maxACLCache {
		return false
	}
	for _, ch := range c.watch {
		select {
		case <-ch:
			return false
		default:
		}
	}
	return true
}

type resolvedToken struct {
	token *structs.ACLToken // nil: anonymous
	acl   *acl.ACL
}

// ResolveACL returns what a secret ("" for anonymous) grants, and its
// token (nil for anonymous), cached until the ACL tables change. An
// expired token is refused even from the cache.
func (s *Server) ResolveACL(_ context.Context, secret string) (*acl.ACL, *structs.ACLToken, error) {
	st := s.fsm.State()
	now := s.clock.Now()
	s.aclCache.mu.Lock()
	if !s.aclCache.valid(st) {
		// Watch first, then read: a change after this point closes a
		// channel and discards what the read below caches.
		watch, _, err := st.ACLWatch()
		if err != nil {
			s.aclCache.mu.Unlock()
			return nil, nil, err
		}
		s.aclCache.store, s.aclCache.watch, s.aclCache.entries = st, watch, map[string]*resolvedToken{}
		s.aclCache.gen++
	}
	gen := s.aclCache.gen
	hit := s.aclCache.entries[secret]
	s.aclCache.mu.Unlock()
	if hit != nil {
		if hit.token.IsExpired(now) {
			return nil, nil, errTokenExpired
		}
		return hit.acl, hit.token, nil
	}
	tok, pols, err := resolveToken(st, secret, now)
	if err != nil {
		return nil, nil, err
	}
	r := &resolvedToken{token: tok, acl: CompileACL(tok, pols)}
	s.aclCache.mu.Lock()
	// Cache it only in the generation it was read for; a change since then
	// closed a watch channel, and the next call starts over.
	if s.aclCache.valid(st) && s.aclCache.gen == gen {
		s.aclCache.entries[secret] = r
	}
	s.aclCache.mu.Unlock()
	return r.acl, r.token, nil
}

// ACLEnabled reports whether the server enforces ACLs.
func (s *Server) ACLEnabled() bool { return s.config.ACLEnabled }

// authorize is the one check of every call that arrives over the RPC port
// (calls in process were checked by the HTTP API that made them): the
// method's declared requirement against the call's token. Node calls are
// checked by their handlers (node secret), calls between servers against
// the servers' shared secret.
func (s *Server) authorize(ctx context.Context, m *rpcapi.Info, req any) error {
	if !s.config.ACLEnabled || !rpcapi.Remote(ctx) {
		return nil
	}
	r := m.Requirement()
	secret := rpcapi.AuthToken(ctx)
	switch r.Kind {
	case acl.KindPublic, acl.KindNodeSecret:
		return nil
	case acl.KindServer:
		st, err := s.fsm.State().ACLState(nil)
		if err != nil {
			return err
		}
		if st.ServerSecret != "" && subtle.ConstantTimeCompare([]byte(st.ServerSecret), []byte(secret)) == 1 {
			return nil
		}
		r = acl.Management()
	}
	a, _, err := s.ResolveACL(ctx, secret)
	if err != nil {
		return err
	}
	if !a.Allows(r, rpcapi.Target(req)) {
		return errPermission
	}
	return nil
}

// nodeRules is what a node's secret ID grants, as a policy: reading
// nodes, and reading jobs, their services and their variables in every
// namespace (a node runs those jobs' tasks and renders their templates; it
// filters variables by each task's own identity).
const nodeRules = `
node {
  policy = "read"
}
namespace "*" {
  capabilities = ["list-jobs", "read-job"]
  variables {
    path "*" {
      capabilities = ["read", "list"]
    }
  }
}
`

// serverSecretContext returns ctx carrying the servers' shared secret when
// m is a call between servers and ACLs are enforced.
func (s *Server) serverSecretContext(ctx context.Context, m *rpcapi.Info) context.Context {
	if !s.config.ACLEnabled || m.Requirement().Kind != acl.KindServer {
		return ctx
	}
	st, err := s.fsm.State().ACLState(nil)
	if err != nil || st.ServerSecret == "" {
		return ctx
	}
	return rpcapi.WithAuthToken(ctx, st.ServerSecret)
}

// ensureServerSecret makes the servers' shared secret, once, on the
// leader of a cluster with ACLs.
func (s *Server) ensureServerSecret() error {
	if !s.config.ACLEnabled {
		return nil
	}
	st, err := s.fsm.State().ACLState(nil)
	if err != nil || st.ServerSecret != "" {
		return err
	}
	_, _, err = s.raftApply(ACLServerSecretRequestType, &ACLServerSecretCommand{Secret: structs.GenerateUUID()})
	return err
}
