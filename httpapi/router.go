package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// router maps "/v1/job/:id/allocations"-style patterns and methods to
// handlers. It exists (instead of http.ServeMux) so that an unknown path is
// a 404 and a known path with the wrong method a 405, each with a plain-text
// message, and so that path parameters are unescaped segments (a job ID may
// hold an escaped "/").
type router struct {
	routes []*route
}

type route struct {
	segments []string // literal segments, or ":name" for a parameter
	methods  map[string]http.Handler
}

// handle registers h for the pattern and methods.
func (rt *router) handle(pattern string, h http.Handler, methods ...string) {
	segs := strings.Split(strings.Trim(pattern, "/"), "/")
	var r *route
	for _, existing := range rt.routes {
		if slices.Equal(existing.segments, segs) {
			r = existing
			break
		}
	}
	if r == nil {
		r = &route{segments: segs, methods: map[string]http.Handler{}}
		rt.routes = append(rt.routes, r)
	}
	for _, m := range methods {
		r.methods[m] = h
	}
}

type pathParamsKey struct{}

// pathParam returns the named path parameter of the request.
func pathParam(req *http.Request, name string) string {
	params, _ := req.Context().Value(pathParamsKey{}).(map[string]string)
	return params[name]
}

// ServeHTTP dispatches the request.
func (rt *router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	segs, err := splitEscapedPath(req.URL.EscapedPath())
	if err != nil {
		writeError(w, req, newHTTPError(http.StatusBadRequest, "invalid URL path %q: %v", req.URL.Path, err))
		return
	}
	for _, r := range rt.routes {
		params, ok := r.match(segs)
		if !ok {
			continue
		}
		h, ok := r.methods[req.Method]
		if !ok {
			allowed := make([]string, 0, len(r.methods))
			for m := range r.methods {
				allowed = append(allowed, m)
			}
			slices.Sort(allowed)
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, req, newHTTPError(http.StatusMethodNotAllowed,
				"method %s is not allowed on %s: use %s", req.Method, req.URL.Path, strings.Join(allowed, ", ")))
			return
		}
		ctx := context.WithValue(req.Context(), pathParamsKey{}, params)
		h.ServeHTTP(w, req.WithContext(ctx))
		return
	}
	writeError(w, req, newHTTPError(http.StatusNotFound, "no such endpoint: %s %s", req.Method, req.URL.Path))
}

func (r *route) match(segs []string) (map[string]string, bool) {
	if len(segs) != len(r.segments) {
		return nil, false
	}
	var params map[string]string
	for i, s := range r.segments {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			if segs[i] == "" {
				return nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[name] = segs[i]
			continue
		}
		if s != segs[i] {
			return nil, false
		}
	}
	return params, true
}

// splitEscapedPath splits an escaped URL path into unescaped segments.
func splitEscapedPath(p string) ([]string, error) {
	raw := strings.Split(strings.Trim(p, "/"), "/")
	out := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, err
		}
		out[i] = u
	}
	return out, nil
}
