package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/drover-io/drover/acl"
)

// router routes requests with an http.ServeMux: patterns hold the method
// and {name} wildcards ("GET /v1/job/{id}/allocations"), whose values are
// the unescaped path segments, so that a job ID holding "/" is matched when
// escaped (/v1/job/a%2Fb, as api and Nomad's clients send it). Around the
// mux, it keeps the API's answers to requests that match no route: a
// plain-text 404 naming the path, or a 405 naming the methods the path
// takes (in Allow too); and a trailing slash is ignored, as before.
type router struct {
	mux *http.ServeMux
	// client wraps the handlers of the /v1/client routes (the forwarding
	// of requests for other nodes to their agents).
	client func(http.Handler) http.Handler
	// authorize wraps every route's handler with the check of its ACL
	// requirement (acl_routes.go declares them; acl_authz.go checks).
	authorize func(h http.Handler, route string, r acl.Requirement) http.Handler
	// routes are the registered routes ("GET /v1/jobs"), in order.
	routes []string
}

// routeMethods are the methods a route may take, probed for a 405's Allow.
var routeMethods = []string{http.MethodDelete, http.MethodGet, http.MethodPost, http.MethodPut}

// newRouter returns a router whose /v1/client routes' handlers are wrapped
// with client.
func newRouter(client func(http.Handler) http.Handler, authorize func(http.Handler, string, acl.Requirement) http.Handler) *router {
	return &router{mux: http.NewServeMux(), client: client, authorize: authorize}
}

// handle registers h for the path pattern and methods.
func (rt *router) handle(pattern string, h http.Handler, methods ...string) {
	if strings.HasPrefix(pattern, "/v1/client/") {
		h = rt.client(h)
	}
	for _, m := range methods {
		route := m + " " + pattern
		rt.routes = append(rt.routes, route)
		rt.mux.Handle(route, rt.authorize(h, route, routeRequirements[route]))
	}
}

// ServeHTTP dispatches the request.
func (rt *router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if p := req.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
		req = trimTrailingSlash(req)
	}
	req = nodePoolPath(req)                        // node_pools.go
	if err := checkVariablePath(req); err != nil { // vars.go
		writeError(w, req, err)
		return
	}
	if _, pattern := rt.mux.Handler(req); pattern != "" {
		rt.mux.ServeHTTP(w, req)
		return
	}
	if allowed := rt.allowed(req); len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, req, newHTTPError(http.StatusMethodNotAllowed,
			"method %s is not allowed on %s: use %s", req.Method, req.URL.Path, strings.Join(allowed, ", ")))
		return
	}
	writeError(w, req, newHTTPError(http.StatusNotFound, "no such endpoint: %s %s", req.Method, req.URL.Path))
}

// allowed returns the methods the request's path takes, sorted.
func (rt *router) allowed(req *http.Request) []string {
	var out []string
	for _, m := range routeMethods {
		probe := *req
		probe.Method = m
		if _, pattern := rt.mux.Handler(&probe); pattern != "" {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// trimTrailingSlash returns a copy of req without the trailing slashes of
// its path.
func trimTrailingSlash(req *http.Request) *http.Request {
	r := req.Clone(req.Context())
	r.URL.Path = strings.TrimRight(r.URL.Path, "/")
	if r.URL.RawPath != "" {
		r.URL.RawPath = strings.TrimRight(r.URL.RawPath, "/")
	}
	if r.URL.Path == "" {
		r.URL.Path = "/"
	}
	return r
}
