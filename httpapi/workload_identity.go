package httpapi

import (
	"net/http"
	"strings"

	"github.com/drover-io/drover/client/template"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// A request whose token (X-Nomad-Token, or Authorization: Bearer) is a
// workload identity (a JWT) is served by workloadGate, not by the router:
// the servers verify the identity and check the operation against its
// implicit policy (server.authorizeWorkload, through the
// IdentityAuthorize RPC), and the request is then served as that task:
// variable reads and lists filtered to the task's paths, service reads
// of its namespace. Every other route is refused with 403, whether or not
// ACLs are enabled: a task's token never acts as more than the task.

// requestToken returns the request's token: X-Nomad-Token, else an
// Authorization: Bearer token.
func requestToken(req *http.Request) string {
	if t := req.Header.Get("X-Nomad-Token"); t != "" {
		return t
	}
	if v, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

// workloadOp returns the operation a request asks for, as the workload
// implicit policy sees it.
func workloadOp(req *http.Request) structs.WorkloadOp {
	ns := req.URL.Query().Get("namespace")
	p := req.URL.Path
	if req.Method == http.MethodGet {
		switch {
		case strings.HasPrefix(p, "/v1/var/"):
			return structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Namespace: ns, Path: strings.TrimPrefix(p, "/v1/var/")}
		case p == "/v1/vars":
			return structs.WorkloadOp{Kind: structs.WorkloadOpVariableList, Namespace: ns, Path: req.URL.Query().Get("prefix")}
		case p == "/v1/services" || strings.HasPrefix(p, "/v1/service/"):
			return structs.WorkloadOp{Kind: structs.WorkloadOpServiceRead, Namespace: ns, Path: p}
		}
	}
	return structs.WorkloadOp{Kind: structs.WorkloadOpOther, Namespace: ns, Path: req.Method + " " + p}
}

// workloadGate serves requests that carry a workload identity (see
// above) and hands the others to next.
func (s *Server) workloadGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tok := requestToken(req)
		if !structs.LooksLikeJWT(tok) {
			next.ServeHTTP(w, req)
			return
		}
		op := workloadOp(req)
		resp, err := rpcapi.IdentityAuthorize.Call(req.Context(), s.rpc, &structs.IdentityAuthorizeRequest{Token: tok, Op: op})
		if err != nil {
			s.logger.Warn("workload identity request refused", "method", req.Method, "path", req.URL.Path,
				"remote", req.RemoteAddr, "error", err)
			writeError(w, req, err)
			return
		}
		claims := resp.Claims
		// Served as the task: its token goes no further.
		r := req.Clone(req.Context())
		r.Header.Del("X-Nomad-Token")
		r.Header.Del("Authorization")
		switch op.Kind {
		case structs.WorkloadOpServiceRead:
			q := r.URL.Query()
			q.Set("namespace", claims.Namespace)
			r.URL.RawQuery = q.Encode()
			ctx := withWorkloadGrant(r.Context(), claims.Namespace) // acl_authz.go
			if s.nodeToken != nil {
				// A client-only agent reads as its node (which may read
				// every namespace's services); the grant and the forced
				// namespace keep the answer to the task's namespace.
				if secret := s.nodeToken(); secret != "" {
					ctx = rpcapi.WithAuthToken(ctx, secret)
				}
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		default:
			h := &template.Handler{RPC: s.rpc, Identity: claims.Workload(), Logger: s.logger}
			h.ServeHTTP(w, r)
		}
	})
}
