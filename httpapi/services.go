package httpapi

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerServiceRoutes adds the endpoints of Nomad service registrations,
// as Nomad's.
func (s *Server) registerServiceRoutes(rt *router) {
	rt.handle("/v1/services", s.wrap(s.serviceList), http.MethodGet)
	rt.handle("/v1/service/{name}", s.wrap(s.serviceGet), http.MethodGet)
	rt.handle("/v1/service/{name}/{id}", s.wrapStatus(s.serviceDelete), http.MethodDelete)
	rt.handle("/v1/allocation/{id}/services", s.wrap(s.allocServices), http.MethodGet)
	rt.handle("/v1/job/{id}/services", s.wrap(s.jobServices), http.MethodGet)
}

// serviceList is GET /v1/services[?namespace=]: per namespace, each
// service's name and tags. A blocking query (index, wait).
func (s *Server) serviceList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ServiceRegistrationList.Call(req.Context(), s.rpc, &structs.ServiceRegistrationListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.ServiceRegistrationListStub, 0, len(resp.Services))
	for _, ns := range resp.Services {
		stub := &api.ServiceRegistrationListStub{Namespace: ns.Namespace}
		for _, svc := range ns.Services {
			stub.Services = append(stub.Services, &api.ServiceRegistrationStub{ServiceName: svc.ServiceName, Tags: slices.Clone(svc.Tags)})
		}
		out = append(out, stub)
	}
	return out, nil
}

// serviceGet is GET /v1/service/:name[?tag=&choose=N|key]: the instances
// of a service, those with the tag, or N of them picked by rendezvous
// hashing on key (the same key picks the same instances while they stay
// registered). A blocking query (index, wait).
func (s *Server) serviceGet(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	q := req.URL.Query()
	n, key, err := chooseParam(q.Get("choose"))
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ServiceRegistrationGet.Call(req.Context(), s.rpc, &structs.ServiceRegistrationByNameRequest{
		ServiceName: req.PathValue("name"), QueryOptions: opts,
	})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	regs := resp.Services
	if tag := q.Get("tag"); tag != "" {
		regs = slices.DeleteFunc(slices.Clone(regs), func(r *structs.ServiceRegistration) bool { return !slices.Contains(r.Tags, tag) })
	}
	if n > 0 {
		regs = chooseRendezvous(regs, n, key)
	}
	return apiRegistrations(regs), nil
}

// chooseParam parses ?choose=N|key; n is 0 when it is absent.
func chooseParam(v string) (n int, key string, err error) {
	if v == "" {
		return 0, "", nil
	}
	num, key, ok := strings.Cut(v, "|")
	n, err = strconv.Atoi(num)
	if !ok || err != nil || n < 1 || key == "" {
		return 0, "", structs.Invalid("choose %q is invalid: use N|key, such as 2|my-client-id", v)
	}
	return n, key, nil
}

// chooseRendezvous picks n of regs by rendezvous (highest random weight)
// hashing: each instance's weight is a hash of its ID and key, and the n
// heaviest win, so that a key keeps its picks while they stay registered
// and adding or removing an instance moves few keys.
func chooseRendezvous(regs []*structs.ServiceRegistration, n int, key string) []*structs.ServiceRegistration {
	type weighted struct {
		reg    *structs.ServiceRegistration
		weight uint64
	}
	ws := make([]weighted, len(regs))
	for i, r := range regs {
		sum := sha256.Sum256([]byte(r.ID + "\x00" + key))
		ws[i] = weighted{r, binary.BigEndian.Uint64(sum[:8])}
	}
	slices.SortFunc(ws, func(a, b weighted) int { return cmp.Compare(b.weight, a.weight) })
	out := make([]*structs.ServiceRegistration, 0, min(n, len(ws)))
	for _, w := range ws[:min(n, len(ws))] {
		out = append(out, w.reg)
	}
	return out
}

// serviceDelete is DELETE /v1/service/:name/:id[?namespace=]: deletes one
// instance (404 when there is none); an empty answer with X-Nomad-Index.
func (s *Server) serviceDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.ServiceRegistrationDelete.Call(req.Context(), s.rpc, &structs.ServiceRegistrationDeleteRequest{
		Namespace: namespaceParam(req), IDs: []string{req.PathValue("id")},
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &withStatus{code: http.StatusOK}, nil
}

// allocServices is GET /v1/allocation/:id/services: the allocation's
// registrations.
func (s *Server) allocServices(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ServiceRegistrationGet.Call(req.Context(), s.rpc, &structs.ServiceRegistrationByNameRequest{
		AllocID: req.PathValue("id"), QueryOptions: opts,
	})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiRegistrations(resp.Services), nil
}

// jobServices is GET /v1/job/:id/services[?namespace=]: the job's
// registrations.
func (s *Server) jobServices(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.ServiceRegistrationGet.Call(req.Context(), s.rpc, &structs.ServiceRegistrationByNameRequest{
		JobID: req.PathValue("id"), QueryOptions: opts,
	})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	return apiRegistrations(resp.Services), nil
}

func apiRegistrations(regs []*structs.ServiceRegistration) []*api.ServiceRegistration {
	out := make([]*api.ServiceRegistration, 0, len(regs))
	for _, r := range regs {
		out = append(out, &api.ServiceRegistration{
			ID: r.ID, ServiceName: r.ServiceName, Namespace: r.Namespace, NodeID: r.NodeID,
			Datacenter: r.Datacenter, JobID: r.JobID, AllocID: r.AllocID, Tags: slices.Clone(r.Tags),
			Address: r.Address, Port: r.Port, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex,
		})
	}
	return out
}

// clientAllocChecks is GET /v1/client/allocation/:id/checks: the latest
// result of each check of the allocation's Nomad services, by check ID,
// from the node that runs it.
func (s *Server) clientAllocChecks(w http.ResponseWriter, req *http.Request) (any, error) {
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return nil, err
	}
	results, err := nc.AllocChecks(alloc.ID)
	if err != nil {
		return nil, err
	}
	out := make(api.AllocCheckStatuses, len(results))
	for id, r := range results {
		out[id] = api.AllocCheckStatus{
			ID: r.ID, Check: r.Check, Group: r.Group, Mode: r.Mode, Output: r.Output, Service: r.Service,
			Status: r.Status, StatusCode: r.StatusCode, Task: r.Task, Timestamp: r.Timestamp,
		}
	}
	return out, nil
}
