package httpapi

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerNamespaceRoutes adds the namespace endpoints, as Nomad's.
func (s *Server) registerNamespaceRoutes(rt *router) {
	rt.handle("/v1/namespaces", s.wrap(s.namespaceList), http.MethodGet)
	rt.handle("/v1/namespace", s.wrap(s.namespaceUpsert), http.MethodPut, http.MethodPost)
	rt.handle("/v1/namespace/{name}", s.wrap(s.namespaceGet), http.MethodGet)
	rt.handle("/v1/namespace/{name}", s.wrap(s.namespaceUpsert), http.MethodPut, http.MethodPost)
	rt.handle("/v1/namespace/{name}", s.wrap(s.namespaceDelete), http.MethodDelete)
}

// namespaceList is GET /v1/namespaces[?prefix=]: []Namespace by name, the
// default one included.
func (s *Server) namespaceList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NamespaceList.Call(req.Context(), s.rpc, &structs.NamespaceListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.Namespace, 0, len(resp.Namespaces))
	g := grantOf(req.Context()) // acl_authz.go: only the namespaces the token may use
	for _, ns := range resp.Namespaces {
		if g == nil || g.acl.AllowNamespace(ns.Name) {
			out = append(out, apiNamespace(ns))
		}
	}
	return out, nil
}

// namespaceGet is GET /v1/namespace/:name; 404 when there is none.
func (s *Server) namespaceGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	if g := grantOf(req.Context()); g != nil && !g.acl.AllowNamespace(req.PathValue("name")) {
		return nil, errPermissionDenied
	}
	resp, err := rpcapi.NamespaceGet.Call(req.Context(), s.rpc, &structs.NamespaceSpecificRequest{Name: req.PathValue("name"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiNamespace(resp.Namespace), nil
}

// namespaceUpsert is PUT|POST /v1/namespace[/:name]: the body is a
// Namespace, which replaces the one of that name (created when there is
// none). A name in the path must be the body's, or the body may leave it
// out.
func (s *Server) namespaceUpsert(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.Namespace
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	if name := req.PathValue("name"); name != "" {
		switch body.Name {
		case "":
			body.Name = name
		case name:
		default:
			return nil, structs.Invalid("the namespace's name %q differs from the path's %q: send it to /v1/namespace/%s", body.Name, name, body.Name)
		}
	}
	ns, err := structsNamespace(&body)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.NamespaceUpsert.Call(req.Context(), s.rpc, &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{ns}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

// namespaceDelete is DELETE /v1/namespace/:name: refused for the default
// namespace, and for one with jobs that are not dead or with variables.
func (s *Server) namespaceDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.NamespaceDelete.Call(req.Context(), s.rpc, &structs.NamespaceDeleteRequest{Names: []string{req.PathValue("name")}})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return nil, nil
}

// structsNamespace converts a namespace of the API. Nomad's enterprise
// settings that drover lacks are refused, named, rather than ignored: a
// namespace that seems to restrict something must restrict it.
func structsNamespace(in *api.Namespace) (*structs.Namespace, error) {
	var unsupported []string
	if c := in.VaultConfiguration; c != nil && (c.Default != "" || c.Allowed != nil || c.Denied != nil) {
		unsupported = append(unsupported, "vault (VaultConfiguration)")
	}
	if c := in.ConsulConfiguration; c != nil && (c.Default != "" || c.Allowed != nil || c.Denied != nil) {
		unsupported = append(unsupported, "consul (ConsulConfiguration)")
	}
	if len(in.RequiredExtraClaims) > 0 || len(in.OptionalExtraClaims) > 0 {
		unsupported = append(unsupported, "RequiredExtraClaims and OptionalExtraClaims")
	}
	if len(unsupported) > 0 {
		return nil, structs.Invalid("namespace %q: %s not supported by drover: remove them", in.Name, strings.Join(unsupported, ", "))
	}
	out := &structs.Namespace{Name: in.Name, Description: in.Description, Quota: in.Quota, Meta: maps.Clone(in.Meta)}
	if c := in.Capabilities; c != nil {
		out.Capabilities = &structs.NamespaceCapabilities{
			EnabledTaskDrivers:   slices.Clone(c.EnabledTaskDrivers),
			DisabledTaskDrivers:  slices.Clone(c.DisabledTaskDrivers),
			EnabledNetworkModes:  slices.Clone(c.EnabledNetworkModes),
			DisabledNetworkModes: slices.Clone(c.DisabledNetworkModes),
		}
	}
	if p := in.NodePoolConfiguration; p != nil {
		out.NodePoolConfiguration = &structs.NamespaceNodePoolConfiguration{Default: p.Default, Allowed: slices.Clone(p.Allowed), Denied: slices.Clone(p.Denied)}
	}
	return out, nil
}

// apiNamespace converts a namespace for the API.
func apiNamespace(in *structs.Namespace) *api.Namespace {
	if in == nil {
		return nil
	}
	out := &api.Namespace{
		Name: in.Name, Description: in.Description, Quota: in.Quota, Meta: maps.Clone(in.Meta),
		CreateIndex: in.CreateIndex, ModifyIndex: in.ModifyIndex,
	}
	if c := in.Capabilities; c != nil {
		out.Capabilities = &api.NamespaceCapabilities{
			EnabledTaskDrivers:   slices.Clone(c.EnabledTaskDrivers),
			DisabledTaskDrivers:  slices.Clone(c.DisabledTaskDrivers),
			EnabledNetworkModes:  slices.Clone(c.EnabledNetworkModes),
			DisabledNetworkModes: slices.Clone(c.DisabledNetworkModes),
		}
	}
	return out
}
