package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/timeline"
)

// registerTimelineRoutes adds GET /v1/client/allocation/:id/timeline.
func (s *Server) registerTimelineRoutes(rt *router) {
	rt.handle("/v1/client/allocation/{id}/timeline", s.wrap(s.clientAllocTimeline), http.MethodGet)
}

// clientAllocTimeline is GET /v1/client/allocation/:id/timeline (a drover
// extension): the allocation's way from its job's registration to its
// task running, the servers' steps (asked over RPC) merged with those of
// this agent's client, which runs the allocation (the request is
// forwarded to the node's agent like every /v1/client request).
func (s *Server) clientAllocTimeline(_ http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.AllocTimeline.Call(req.Context(), s.rpc, &structs.AllocSpecificRequest{
		AllocID:      req.PathValue("id"),
		QueryOptions: structs.QueryOptions{Namespace: namespaceParam(req), Region: req.URL.Query().Get("region")},
	})
	if err != nil {
		return nil, err
	}
	entries := resp.Entries
	if s.client != nil {
		entries = timeline.Merge(entries, s.client.AllocTimeline(resp.AllocID))
	}
	out := &api.AllocTimeline{AllocID: resp.AllocID, EvalID: resp.EvalID, Steps: make([]api.TimelineStep, 0, len(entries))}
	for _, e := range entries {
		out.Steps = append(out.Steps, api.TimelineStep{Name: e.Step.String(), Time: e.Time})
	}
	return out, nil
}
