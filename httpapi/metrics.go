package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/structs"
)

// Metrics is the agent's telemetry, which /v1/metrics serves.
type Metrics interface {
	// Summary returns the JSON body: the last finished interval of the
	// in-memory sink (Timestamp, Gauges, Points, Counters, Samples).
	Summary() (any, error)
	// PrometheusHandler serves the Prometheus text exposition; nil when
	// telemetry { prometheus_metrics } is off.
	PrometheusHandler() http.Handler
}

// registerMetricsRoute adds GET /v1/metrics, in JSON or, with
// ?format=prometheus, in the Prometheus text format.
func (s *Server) registerMetricsRoute(rt *router) {
	rt.handle("/v1/metrics", http.HandlerFunc(s.metrics), http.MethodGet)
}

func (s *Server) metrics(w http.ResponseWriter, req *http.Request) {
	if s.telemetry == nil {
		writeError(w, req, structs.NewError(structs.KindNotFound, "this agent publishes no metrics"))
		return
	}
	if req.URL.Query().Get("format") == "prometheus" {
		h := s.telemetry.PrometheusHandler()
		if h == nil {
			writeError(w, req, structs.NewError(structs.KindInvalid,
				"Prometheus metrics are not enabled: set telemetry { prometheus_metrics = true } in the agent configuration"))
			return
		}
		h.ServeHTTP(w, req)
		return
	}
	s.wrap(func(http.ResponseWriter, *http.Request) (any, error) { return s.telemetry.Summary() }).ServeHTTP(w, req)
}
