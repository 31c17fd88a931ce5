package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerGossipKeyringRoutes adds Nomad's /v1/agent/keyring endpoints:
// the servers' gossip encryption keys, as the answering server's pool
// holds them.
func (s *Server) registerGossipKeyringRoutes(rt *router) {
	rt.handle("/v1/agent/keyring/list", s.wrap(s.gossipKeyringList), http.MethodGet)
	for _, op := range []string{structs.GossipKeyringInstall, structs.GossipKeyringUse, structs.GossipKeyringRemove} {
		rt.handle("/v1/agent/keyring/"+op, s.wrap(s.gossipKeyringOp(op)), http.MethodPut, http.MethodPost)
	}
}

func (s *Server) gossipKeyringList(_ http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.GossipKeyringList.Call(req.Context(), s.rpc, &structs.GossipKeyringListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	return apiKeyringResponse(resp), nil
}

// gossipKeyringOp is PUT|POST /v1/agent/keyring/<op> {"Key": "..."}.
func (s *Server) gossipKeyringOp(op string) endpoint {
	return func(_ http.ResponseWriter, req *http.Request) (any, error) {
		var body api.KeyringRequest
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
		if body.Key == "" {
			return nil, structs.Invalid(`missing key: give {"Key": "<base64 of 16, 24 or 32 bytes>"}`)
		}
		resp, err := rpcapi.GossipKeyringOp.Call(req.Context(), s.rpc, &structs.GossipKeyringRequest{Op: op, Key: body.Key})
		if err != nil {
			return nil, err
		}
		return apiKeyringResponse(resp), nil
	}
}

func apiKeyringResponse(r *structs.GossipKeyringResponse) *api.KeyringResponse {
	out := &api.KeyringResponse{Messages: r.Messages, Keys: r.Keys, NumNodes: r.NumNodes}
	if out.Messages == nil {
		out.Messages = map[string]string{}
	}
	if out.Keys == nil {
		out.Keys = map[string]int{}
	}
	return out
}
