package httpapi

import (
	"maps"
	"net/http"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// nodePoolPrefix is where Nomad serves one node pool, /v1/node/pool/:name.
// Those paths overlap /v1/node/:id/... for ServeMux (a node whose ID is
// "pool"), which refuses such ambiguous patterns, so the router serves
// them under nodePoolRoute instead (nodePoolPath): node IDs are UUIDs.
const (
	nodePoolPrefix = "/v1/node/pool/"
	nodePoolRoute  = "/v1/node-pool/"
)

// nodePoolPath returns req with a /v1/node/pool/... path moved to the
// internal nodePoolRoute; other requests as they are.
func nodePoolPath(req *http.Request) *http.Request {
	rest, ok := strings.CutPrefix(req.URL.Path, nodePoolPrefix)
	if !ok {
		return req
	}
	r := req.Clone(req.Context())
	r.URL.Path = nodePoolRoute + rest
	r.URL.RawPath = ""
	// Keep an escaped name escaped ("node%2Fpool" is one name, not two
	// segments): the mux matches the escaped path.
	if raw, ok := strings.CutPrefix(req.URL.RawPath, nodePoolPrefix); ok {
		r.URL.RawPath = nodePoolRoute + raw
	}
	return r
}

// registerNodePoolRoutes adds the node pool endpoints, as Nomad's.
func (s *Server) registerNodePoolRoutes(rt *router) {
	rt.handle("/v1/node/pools", s.wrap(s.nodePoolList), http.MethodGet)
	rt.handle("/v1/node/pools", s.wrap(s.nodePoolUpsert), http.MethodPut, http.MethodPost)
	rt.handle(nodePoolRoute+"{name}", s.wrap(s.nodePoolGet), http.MethodGet)
	rt.handle(nodePoolRoute+"{name}", s.wrap(s.nodePoolUpsert), http.MethodPut, http.MethodPost)
	rt.handle(nodePoolRoute+"{name}", s.wrap(s.nodePoolDelete), http.MethodDelete)
	rt.handle(nodePoolRoute+"{name}/nodes", s.wrap(s.nodePoolNodes), http.MethodGet)
	rt.handle(nodePoolRoute+"{name}/jobs", s.wrap(s.nodePoolJobs), http.MethodGet)
}

// nodePoolList is GET /v1/node/pools[?prefix=]: []NodePool by name, the
// built-in ones and those nodes are in included.
func (s *Server) nodePoolList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodePoolList.Call(req.Context(), s.rpc, &structs.NodePoolListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.NodePool, 0, len(resp.NodePools))
	for _, p := range resp.NodePools {
		out = append(out, apiNodePool(p))
	}
	return out, nil
}

// nodePoolGet is GET /v1/node/pool/:name; 404 when there is none.
func (s *Server) nodePoolGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodePoolGet.Call(req.Context(), s.rpc, &structs.NodePoolSpecificRequest{Name: req.PathValue("name"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiNodePool(resp.NodePool), nil
}

// nodePoolNodes is GET /v1/node/pool/:name/nodes: the stubs of the pool's
// nodes (every node for "all").
func (s *Server) nodePoolNodes(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	name := req.PathValue("name")
	if _, err := rpcapi.NodePoolGet.Call(req.Context(), s.rpc, &structs.NodePoolSpecificRequest{Name: name, QueryOptions: opts}); err != nil {
		return nil, err
	}
	resp, err := rpcapi.NodeList.Call(req.Context(), s.rpc, &structs.NodeListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*structs.NodeListStub, 0, len(resp.Nodes))
	for _, n := range resp.Nodes {
		if name == structs.NodePoolAll || structs.InNodePool(n.NodePool, name) {
			out = append(out, n)
		}
	}
	return out, nil
}

// nodePoolJobs is GET /v1/node/pool/:name/jobs[?namespace=]: the stubs of
// the pool's jobs (every job for "all").
func (s *Server) nodePoolJobs(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	name := req.PathValue("name")
	if _, err := rpcapi.NodePoolGet.Call(req.Context(), s.rpc, &structs.NodePoolSpecificRequest{Name: name, QueryOptions: opts}); err != nil {
		return nil, err
	}
	resp, err := rpcapi.JobList.Call(req.Context(), s.rpc, &structs.JobListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*structs.JobListStub, 0, len(resp.Jobs))
	for _, j := range resp.Jobs {
		if name == structs.NodePoolAll || j.NodePool == name {
			out = append(out, j)
		}
	}
	return out, nil
}

// nodePoolUpsert is PUT|POST /v1/node/pools or /v1/node/pool/:name: the
// body is a NodePool, which replaces the one of that name (created when
// there is none). A name in the path must be the body's, or the body may
// leave it out. The built-in pools cannot be written.
func (s *Server) nodePoolUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.NodePool
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	if name := req.PathValue("name"); name != "" {
		switch body.Name {
		case "":
			body.Name = name
		case name:
		default:
			return nil, structs.Invalid("the node pool's name %q differs from the path's %q", body.Name, name)
		}
	}
	if len(body.SchedulerConfiguration) > 0 && !isUnsetJSON(body.SchedulerConfiguration) {
		return nil, structs.Invalid("node pool %q: SchedulerConfiguration is not supported by drover: remove it", body.Name)
	}
	p := &structs.NodePool{Name: body.Name, Description: body.Description, Meta: maps.Clone(body.Meta),
		NodeIdentityTTL: body.NodeIdentityTTL}
	resp, err := rpcapi.NodePoolUpsert.Call(req.Context(), s.rpc, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{p}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

// nodePoolDelete is DELETE /v1/node/pool/:name: refused for the built-in
// pools and for one that holds nodes or jobs that are not dead.
func (s *Server) nodePoolDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.NodePoolDelete.Call(req.Context(), s.rpc, &structs.NodePoolDeleteRequest{Names: []string{req.PathValue("name")}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

// apiNodePool converts a node pool for the API.
func apiNodePool(in *structs.NodePool) *api.NodePool {
	if in == nil {
		return nil
	}
	return &api.NodePool{Name: in.Name, Description: in.Description, Meta: maps.Clone(in.Meta),
		NodeIdentityTTL: in.NodeIdentityTTL, CreateIndex: in.CreateIndex, ModifyIndex: in.ModifyIndex}
}
