package server

import (
	"context"
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// ServiceRegistrationUpsert registers a node's service instances. Each must
// belong to an allocation placed on the node; the server fills in the
// namespace, job and datacenter from the allocation and the node, so that
// a client cannot register under another job's name. Registering an
// unchanged instance again writes nothing.
func (s *Server) ServiceRegistrationUpsert(ctx context.Context, req *structs.ServiceRegistrationUpsertRequest) (*structs.ServiceRegistrationUpsertResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	node, err := s.authNode(req.NodeID, req.SecretID)
	if err != nil {
		return nil, err
	}
	st := s.fsm.State()
	regs := make([]*structs.ServiceRegistration, 0, len(req.Services))
	changed := false
	for _, in := range req.Services {
		if in == nil {
			continue
		}
		if err := in.Validate(); err != nil {
			return nil, err
		}
		alloc, err := st.AllocByID(nil, in.AllocID)
		if err != nil {
			return nil, fmt.Errorf("read alloc %q: %w", in.AllocID, err)
		}
		if alloc == nil {
			continue // gone: nothing to register
		}
		if alloc.NodeID != req.NodeID {
			return nil, permissionDenied("node %q may not register services of alloc %q: it is placed on another node", req.NodeID, in.AllocID)
		}
		reg := in.Copy()
		reg.Namespace, reg.JobID, reg.NodeID, reg.Datacenter = alloc.Namespace, alloc.JobID, node.ID, node.Datacenter
		regs = append(regs, reg)
		stored, err := st.ServiceRegistrationByID(nil, reg.Namespace, reg.ID)
		if err != nil {
			return nil, err
		}
		if !stored.Equal(reg) {
			changed = true
		}
	}
	if !changed {
		return &structs.ServiceRegistrationUpsertResponse{}, nil
	}
	index, _, err := s.raftApply(ServiceUpsertRequestType, &ServiceUpsertCommand{Services: regs})
	if err != nil {
		return nil, err
	}
	return &structs.ServiceRegistrationUpsertResponse{Index: index}, nil
}

// ServiceRegistrationDelete deletes registrations: a node's of its
// allocations (NodeID, SecretID and AllocIDs), or any by ID in a
// namespace (the HTTP API). Deleting what is not there is no error.
func (s *Server) ServiceRegistrationDelete(ctx context.Context, req *structs.ServiceRegistrationDeleteRequest) (*structs.ServiceRegistrationDeleteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, structs.Invalid("missing request")
	}
	cmd := &ServiceDeleteCommand{}
	st := s.fsm.State()
	if req.NodeID != "" {
		if _, err := s.authNode(req.NodeID, req.SecretID); err != nil {
			return nil, err
		}
	} else if len(req.AllocIDs) > 0 {
		return nil, structs.Invalid("deleting an allocation's services needs the node's ID and secret")
	}
	if len(req.AllocIDs) > 0 {
		for _, id := range req.AllocIDs {
			alloc, err := st.AllocByID(nil, id)
			if err != nil {
				return nil, fmt.Errorf("read alloc %q: %w", id, err)
			}
			if alloc != nil && alloc.NodeID != req.NodeID {
				return nil, permissionDenied("node %q may not delete services of alloc %q: it is placed on another node", req.NodeID, id)
			}
			regs, err := st.ServiceRegistrationsByAlloc(nil, id)
			if err != nil {
				return nil, err
			}
			if len(regs) > 0 {
				cmd.AllocIDs = append(cmd.AllocIDs, id)
			}
		}
	}
	if len(req.IDs) > 0 {
		cmd.Namespace = req.Namespace
		if cmd.Namespace == "" {
			cmd.Namespace = structs.DefaultNamespace
		}
		for _, id := range req.IDs {
			reg, err := st.ServiceRegistrationByID(nil, cmd.Namespace, id)
			if err != nil {
				return nil, err
			}
			if reg == nil {
				if req.NodeID != "" {
					continue // a node deleting what is gone: done
				}
				return nil, structs.NewError(structs.KindNotFound, "service registration %q not found in namespace %q", id, cmd.Namespace)
			}
			if req.NodeID != "" && reg.NodeID != req.NodeID {
				return nil, permissionDenied("node %q may not delete service registration %q of another node", req.NodeID, id)
			}
			cmd.IDs = append(cmd.IDs, id)
		}
	}
	if len(cmd.IDs) == 0 && len(cmd.AllocIDs) == 0 {
		return &structs.ServiceRegistrationDeleteResponse{Index: st.Index(state.TableServices)}, nil
	}
	index, out, err := s.raftApply(ServiceDeleteRequestType, cmd)
	if err != nil {
		return nil, err
	}
	n, _ := out.(int)
	return &structs.ServiceRegistrationDeleteResponse{Index: index, Deleted: n}, nil
}

// ServiceRegistrationList lists the services of a namespace ("*": all):
// per namespace, each service's name and the union of its instances' tags,
// sorted. As a blocking query it returns when a registration changes.
func (s *Server) ServiceRegistrationList(ctx context.Context, req *structs.ServiceRegistrationListRequest) (*structs.ServiceRegistrationListResponse, error) {
	ns := namespaceOf(&req.QueryOptions)
	resp := &structs.ServiceRegistrationListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		regs, err := st.ServiceRegistrations(ws, ns)
		if err != nil {
			return 0, err
		}
		resp.Services = listServices(regs)
		return st.Index(state.TableServices), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// listServices groups registrations (sorted by namespace and name) into
// Nomad's list shape.
func listServices(regs []*structs.ServiceRegistration) []*structs.ServiceRegistrationListStub {
	out := []*structs.ServiceRegistrationListStub{}
	var ns *structs.ServiceRegistrationListStub
	var svc *structs.ServiceRegistrationStub
	for _, r := range regs {
		if ns == nil || ns.Namespace != r.Namespace {
			ns = &structs.ServiceRegistrationListStub{Namespace: r.Namespace}
			out = append(out, ns)
			svc = nil
		}
		if svc == nil || svc.ServiceName != r.ServiceName {
			svc = &structs.ServiceRegistrationStub{ServiceName: r.ServiceName, Tags: []string{}}
			ns.Services = append(ns.Services, svc)
		}
		for _, t := range r.Tags {
			if !slices.Contains(svc.Tags, t) {
				svc.Tags = append(svc.Tags, t)
			}
		}
		slices.Sort(svc.Tags)
	}
	return out
}

// ServiceRegistrationGet reads the instances of a service in a namespace,
// or (AllocID set) the registrations of an allocation, or (JobID set) of
// a job. As a blocking query
// it returns when a registration changes.
func (s *Server) ServiceRegistrationGet(ctx context.Context, req *structs.ServiceRegistrationByNameRequest) (*structs.ServiceRegistrationByNameResponse, error) {
	ns := namespaceOf(&req.QueryOptions)
	if req.AllocID == "" && (ns == "*" || (req.ServiceName == "" && req.JobID == "")) {
		return nil, structs.Invalid("reading a service needs its name (or a job's ID) and one namespace, not \"*\"")
	}
	resp := &structs.ServiceRegistrationByNameResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var regs []*structs.ServiceRegistration
		var err error
		switch {
		case req.AllocID != "":
			regs, err = st.ServiceRegistrationsByAlloc(ws, req.AllocID)
		case req.JobID != "":
			regs, err = st.ServiceRegistrations(ws, ns)
			regs = slices.DeleteFunc(regs, func(r *structs.ServiceRegistration) bool { return r.JobID != req.JobID })
		default:
			regs, err = st.ServiceRegistrationsByName(ws, ns, req.ServiceName)
		}
		if err != nil {
			return 0, err
		}
		resp.Services = regs
		return st.Index(state.TableServices), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
