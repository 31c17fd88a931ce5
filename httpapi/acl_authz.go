package httpapi

import (
	"context"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// ACLResolver resolves a request's token to what it grants: the server in
// process (cached by the ACL tables' index), or the servers over RPC for a
// client-only agent (cached for the agent's acl.token_ttl). A nil
// resolver means ACLs are disabled: every request is served.
type ACLResolver interface {
	// ResolveACL returns what secret ("" for anonymous) grants and its
	// token (nil for anonymous); an unknown or expired token is a
	// structs.KindPermission error.
	ResolveACL(ctx context.Context, secret string) (*acl.ACL, *structs.ACLToken, error)
}

// Failed token lookups are limited per remote address: at most
// failedLookupBurst within failedLookupWindow, then 429 until the window
// passes.
const (
	failedLookupBurst  = 20
	failedLookupWindow = time.Minute
	maxLimitedAddrs    = 10000
)

// lookupLimiter counts failed token lookups per remote address.
type lookupLimiter struct {
	now func() time.Time
	mu  sync.Mutex // guards the field below
	// failures: remote host -> its failures in the current window.
	failures map[string]*failureWindow
}

type failureWindow struct {
	start time.Time
	count int
}

func newLookupLimiter(now func() time.Time) *lookupLimiter {
	return &lookupLimiter{now: now, failures: map[string]*failureWindow{}}
}

// limited reports whether host has failed too often in its window.
func (l *lookupLimiter) limited(host string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.failures[host]
	if w == nil {
		return false
	}
	if l.now().Sub(w.start) >= failedLookupWindow {
		delete(l.failures, host)
		return false
	}
	return w.count >= failedLookupBurst
}

// fail records a failed lookup from host.
func (l *lookupLimiter) fail(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w := l.failures[host]
	if w == nil || now.Sub(w.start) >= failedLookupWindow {
		if len(l.failures) >= maxLimitedAddrs {
			l.failures = map[string]*failureWindow{} // bound the memory; start over
		}
		w = &failureWindow{start: now}
		l.failures[host] = w
	}
	w.count++
}

// limitGuesses runs call, which checks a secret the caller presents in
// its body (a login token, a one-time token's secret), under the same
// per-address limit as failed token lookups: refused with 429 while the
// address is limited, and a refusal counts as a failure.
func (s *Server) limitGuesses(req *http.Request, call func() error) error {
	host := remoteHost(req)
	if s.lookups.limited(host) {
		return newHTTPError(http.StatusTooManyRequests, "too many refused logins or token exchanges from %s: try again later", host)
	}
	err := call()
	if structs.KindOf(err) == structs.KindPermission {
		s.lookups.fail(host)
		s.logger.Warn("login or token exchange refused", "remote", req.RemoteAddr, "path", req.URL.Path, "error", err)
	}
	return err
}

func remoteHost(req *http.Request) string {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		return req.RemoteAddr
	}
	return host
}

// aclGrant is what the authorization found for a request, for the
// handlers that filter what they return (lists across namespaces, the
// event stream).
type aclGrant struct {
	acl   *acl.ACL
	token *structs.ACLToken
	req   acl.Requirement
	// workload: the grant of a task's workload identity, set by the
	// workload gate before routing.
	workload bool
}

// withWorkloadGrant returns ctx granting what a task's identity may read
// through the API with ACLs enabled: the jobs and services of its
// namespace.
func withWorkloadGrant(ctx context.Context, namespace string) context.Context {
	a := acl.New(&acl.Policy{Namespaces: []*acl.NamespaceRule{{
		Name: namespace, Capabilities: []string{acl.NamespaceCapabilityReadJob, acl.NamespaceCapabilityListJobs},
	}}})
	return context.WithValue(ctx, aclGrantKey{}, &aclGrant{acl: a, workload: true})
}

type aclGrantKey struct{}

// grantOf returns the request's grant; nil when ACLs are disabled.
func grantOf(ctx context.Context) *aclGrant {
	g, _ := ctx.Value(aclGrantKey{}).(*aclGrant)
	return g
}

// errPermissionDenied is Nomad's answer to a request its token may not
// make.
var errPermissionDenied = structs.NewError(structs.KindPermission, "Permission denied")

// authorizeRoute wraps a route's handler with the check of its
// requirement: with ACLs enabled, the request's token must grant it. A
// route that declared none is refused.
func (s *Server) authorizeRoute(h http.Handler, route string, r acl.Requirement) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if s.acl == nil {
			h.ServeHTTP(w, req)
			return
		}
		if !r.Declared() {
			s.logger.Error("route declares no ACL requirement: refused", "route", route)
			writeError(w, req, errPermissionDenied)
			return
		}
		secret := requestToken(req) // workload_identity.go
		ctx := req.Context()
		if g := grantOf(ctx); g != nil && g.workload {
			// A task's request that the workload gate authorized: its
			// grant decides (its namespace's services).
			t := acl.Target{Namespace: req.URL.Query().Get("namespace")}
			if !g.acl.Allows(r, t) {
				writeError(w, req, errPermissionDenied)
				return
			}
			g2 := *g
			g2.req = r
			h.ServeHTTP(w, req.WithContext(context.WithValue(ctx, aclGrantKey{}, &g2)))
			return
		}
		if r.Kind == acl.KindPublic {
			h.ServeHTTP(w, req.WithContext(rpcapi.WithAuthToken(ctx, secret)))
			return
		}
		host := remoteHost(req)
		if secret != "" && s.lookups.limited(host) {
			writeError(w, req, newHTTPError(http.StatusTooManyRequests,
				"too many requests with unknown ACL tokens from %s: try again later", host))
			return
		}
		a, tok, err := s.acl.ResolveACL(ctx, secret)
		if err != nil {
			if structs.KindOf(err) == structs.KindPermission {
				s.lookups.fail(host)
				s.logger.Warn("ACL token refused", "remote", req.RemoteAddr, "method", req.Method, "path", req.URL.Path, "error", err)
			}
			writeError(w, req, err)
			return
		}
		target, err := s.routeTarget(ctx, req, secret)
		if err != nil {
			writeError(w, req, err)
			return
		}
		if !a.Allows(r, target) {
			s.logger.Debug("request denied by ACL", "remote", req.RemoteAddr, "method", req.Method, "path", req.URL.Path, "requires", r.String())
			writeError(w, req, errPermissionDenied)
			return
		}
		ctx = rpcapi.WithAuthToken(ctx, secret)
		ctx = context.WithValue(ctx, aclGrantKey{}, &aclGrant{acl: a, token: tok, req: r})
		h.ServeHTTP(w, req.WithContext(ctx))
	})
}

// routeTarget returns what the request names: its namespace (the
// allocation's for the routes of one allocation, ?namespace= otherwise)
// and a variable's path.
func (s *Server) routeTarget(ctx context.Context, req *http.Request, secret string) (acl.Target, error) {
	t := acl.Target{Namespace: req.URL.Query().Get("namespace"), Path: req.PathValue("path")}
	if t.Namespace == "" {
		t.Namespace = structs.DefaultNamespace
	}
	if id := req.PathValue("id"); id != "" && isAllocRoute(req.Pattern) {
		resp, err := rpcapi.AllocGet.Call(rpcapi.WithAuthToken(ctx, secret), s.rpc,
			&structs.AllocSpecificRequest{AllocID: id, QueryOptions: structs.QueryOptions{Namespace: "*", AllowStale: true}})
		if err != nil {
			return t, err
		}
		if resp.Alloc != nil {
			t.Namespace = resp.Alloc.Namespace
		}
	}
	return t, nil
}

// isAllocRoute reports whether a route pattern's {id} is an allocation's
// on the client (its namespace is the allocation's, whatever the query
// says).
func isAllocRoute(pattern string) bool {
	return strings.Contains(pattern, "/allocation/{id}") || strings.Contains(pattern, "/v1/client/fs/")
}

// filterByGrant drops from a list the items of namespaces the request's
// token may not use for its route's capability, and refuses a single
// object of such a namespace. Values without a Namespace pass.
func filterByGrant(ctx context.Context, out any) (any, error) {
	g := grantOf(ctx)
	if g == nil || g.acl.IsManagement() || g.req.Kind != acl.KindNamespace {
		return out, nil
	}
	allowed := func(ns string) bool { return g.acl.AllowNamespaceOperation(ns, g.req.Capability) }
	v := reflect.ValueOf(out)
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			return out, nil
		}
		kept := reflect.MakeSlice(v.Type(), 0, v.Len())
		for i := range v.Len() {
			if ns, ok := namespaceOf(v.Index(i)); ok && !allowed(ns) {
				continue
			}
			kept = reflect.Append(kept, v.Index(i))
		}
		return kept.Interface(), nil
	case reflect.Pointer, reflect.Struct:
		if ns, ok := namespaceOf(v); ok && !allowed(ns) {
			return nil, errPermissionDenied
		}
	}
	return out, nil
}

// namespaceOf returns a struct's (or pointer to struct's) Namespace field.
func namespaceOf(v reflect.Value) (string, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "", false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return "", false
	}
	f := v.FieldByName("Namespace")
	if !f.IsValid() || f.Kind() != reflect.String || f.String() == "" {
		return "", false
	}
	return f.String(), true
}

// allowEvent reports whether the request's token may see an event of the
// event stream: a node's or a drain's (whose payload is a node) needs node
// read, the others read-job in their namespace.
func allowEvent(g *aclGrant, e *structs.StreamEvent) bool {
	if g == nil || g.acl.IsManagement() {
		return true
	}
	if e.Topic == structs.TopicNode || e.Topic == structs.TopicNodeDrain {
		return g.acl.AllowNodeRead()
	}
	ns := e.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	return g.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
}
