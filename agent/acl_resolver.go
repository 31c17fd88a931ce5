package agent

import (
	"context"
	"sync"
	"time"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/httpapi"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// aclBootstrapResetFile, in <data_dir>/server, holds the index of the last
// ACL bootstrap to allow another (docs/acl.md).
const aclBootstrapResetFile = "acl-bootstrap-reset"

// maxClientACLCache bounds a client agent's resolved tokens.
const maxClientACLCache = 1024

// aclResolver returns what resolves the HTTP API's tokens: nil without
// ACLs, the server in process, or the servers over RPC (cached for the
// acl block's TTLs) for a client-only agent.
func (a *Agent) aclResolver(rpc rpcapi.Conn) httpapi.ACLResolver {
	if !a.cfg.ACL.Enabled {
		return nil
	}
	if a.server != nil {
		return a.server
	}
	return newRPCACLResolver(rpc, a.cfg.ACL.cacheTTL(), time.Now)
}

// rpcACLResolver resolves tokens with the servers (ACLResolveToken) and
// keeps the answers for ttl.
type rpcACLResolver struct {
	rpc rpcapi.Conn
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex // guards the field below
	entries map[string]*clientResolved
}

type clientResolved struct {
	acl     *acl.ACL
	token   *structs.ACLToken
	expires time.Time
}

func newRPCACLResolver(rpc rpcapi.Conn, ttl time.Duration, now func() time.Time) *rpcACLResolver {
	return &rpcACLResolver{rpc: rpc, ttl: ttl, now: now, entries: map[string]*clientResolved{}}
}

// ResolveACL implements httpapi.ACLResolver.
func (r *rpcACLResolver) ResolveACL(ctx context.Context, secret string) (*acl.ACL, *structs.ACLToken, error) {
	now := r.now()
	r.mu.Lock()
	hit := r.entries[secret]
	r.mu.Unlock()
	if hit != nil && now.Before(hit.expires) {
		if hit.token.IsExpired(now) {
			return nil, nil, structs.NewError(structs.KindPermission, "ACL token expired")
		}
		return hit.acl, hit.token, nil
	}
	resp, err := rpcapi.ACLResolveToken.Call(rpcapi.WithAuthToken(ctx, secret), r.rpc, &structs.ACLResolveRequest{SecretID: secret})
	if err != nil {
		return nil, nil, err
	}
	e := &clientResolved{acl: server.CompileACL(resp.Token, resp.Policies), token: resp.Token, expires: now.Add(r.ttl)}
	r.mu.Lock()
	if len(r.entries) >= maxClientACLCache {
		r.entries = map[string]*clientResolved{}
	}
	r.entries[secret] = e
	r.mu.Unlock()
	return e.acl, e.token, nil
}
