package httpapi

import "net/http"

// registerObservabilityRoutes adds the endpoints that let an operator look
// into and touch what runs: alloc exec (exec.go), the agent's logs
// (monitor.go) and its profiles (pprof.go); the cluster's members are
// operator_cluster.go's. Logs and profiles of another node (?node_id) are served by
// that node's agent, as the /v1/client routes are.
func (s *Server) registerObservabilityRoutes(rt *router) {
	rt.handle("/v1/client/allocation/{id}/exec", http.HandlerFunc(s.allocExec), http.MethodGet)
	rt.handle("/v1/agent/monitor", s.forwardClientRequests(http.HandlerFunc(s.agentMonitor)), http.MethodGet)
	rt.handle("/v1/agent/pprof/{profile}", s.forwardClientRequests(http.HandlerFunc(s.agentPprof)), http.MethodGet)
}
