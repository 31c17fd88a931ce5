package httpapi

import "net/http"

// registerObservabilityRoutes adds the endpoints that let an operator look
// into and touch what runs: alloc exec (exec.go).
func (s *Server) registerObservabilityRoutes(rt *router) {
	rt.handle("/v1/client/allocation/{id}/exec", http.HandlerFunc(s.allocExec), http.MethodGet)
}
