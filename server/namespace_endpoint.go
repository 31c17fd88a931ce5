package server

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// NamespaceList lists the namespaces (Prefix filters by name), the default
// one included, by name.
func (s *Server) NamespaceList(ctx context.Context, req *structs.NamespaceListRequest) (*structs.NamespaceListResponse, error) {
	resp := &structs.NamespaceListResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		nss, err := st.Namespaces(ws, req.Prefix)
		if err != nil {
			return 0, err
		}
		resp.Namespaces = nss
		// The default namespace exists from the first index on.
		return max(st.Index(state.TableNamespaces), 1), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// NamespaceGet reads one namespace by name; an unknown one is
// KindNotFound.
func (s *Server) NamespaceGet(ctx context.Context, req *structs.NamespaceSpecificRequest) (*structs.SingleNamespaceResponse, error) {
	if req.Name == "" {
		return nil, structs.Invalid("missing namespace name")
	}
	resp := &structs.SingleNamespaceResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		ns, err := st.NamespaceByName(ws, req.Name)
		if err != nil {
			return 0, err
		}
		resp.Namespace = ns
		if ns == nil {
			return max(st.Index(state.TableNamespaces), 1), structs.NotFound("namespace", req.Name)
		}
		return ns.ModifyIndex, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// NamespaceUpsert creates or updates namespaces, each checked first
// (structs.Namespace.Validate).
func (s *Server) NamespaceUpsert(ctx context.Context, req *structs.NamespaceUpsertRequest) (*structs.NamespaceWriteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.Namespaces) == 0 {
		return nil, structs.Invalid("no namespace to create or update")
	}
	if r, ok, err := replayed(s, req.RequestID, completeNamespaceWrite); ok || err != nil {
		return r, err
	}
	cmd := &NamespaceUpsertCommand{Namespaces: make([]*structs.Namespace, 0, len(req.Namespaces))}
	for _, ns := range req.Namespaces {
		if ns == nil {
			return nil, structs.Invalid("a namespace of the request is empty")
		}
		if err := ns.Validate(); err != nil {
			return nil, err
		}
		c := ns.Copy()
		c.CreateIndex, c.ModifyIndex = 0, 0
		cmd.Namespaces = append(cmd.Namespaces, c)
	}
	return applyWrite(s, req.RequestID, NamespaceUpsertRequestType, cmd, &structs.NamespaceWriteResponse{}, completeNamespaceWrite)
}

// NamespaceDelete deletes namespaces: none when one of them does not
// exist, is the default one, or holds a job that is not dead (the FSM
// checks again, so that a job registered meanwhile is not orphaned).
func (s *Server) NamespaceDelete(ctx context.Context, req *structs.NamespaceDeleteRequest) (*structs.NamespaceWriteResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.Names) == 0 {
		return nil, structs.Invalid("no namespace to delete")
	}
	if r, ok, err := replayed(s, req.RequestID, completeNamespaceWrite); ok || err != nil {
		return r, err
	}
	// The FSM checks again: this answers without a raft entry.
	for _, name := range req.Names {
		if err := s.fsm.State().CanDeleteNamespace(name); err != nil {
			return nil, err
		}
	}
	return applyWrite(s, req.RequestID, NamespaceDeleteRequestType, &NamespaceDeleteCommand{Names: req.Names},
		&structs.NamespaceWriteResponse{}, completeNamespaceWrite)
}

// completeNamespaceWrite completes a namespace write's reply with its index.
func completeNamespaceWrite(r *structs.NamespaceWriteResponse, index uint64, _ any) { r.Index = index }

// checkNamespaceExists returns structs.NamespaceMissing when the
// namespace does not exist.
func (s *Server) checkNamespaceExists(name string) error {
	ns, err := s.fsm.State().NamespaceByName(nil, name)
	if err != nil {
		return err
	}
	if ns == nil {
		return structs.NamespaceMissing(name)
	}
	return nil
}

// checkJobNamespace refuses a job whose namespace does not exist or does
// not allow what the job uses, or whose node pool does not exist.
func (s *Server) checkJobNamespace(job *structs.Job) error {
	if err := s.checkJobNodePool(job); err != nil { // node_pool_endpoint.go
		return err
	}
	ns, err := s.fsm.State().NamespaceByName(nil, job.Namespace)
	if err != nil {
		return err
	}
	if ns == nil {
		return structs.NamespaceMissing(job.Namespace)
	}
	return ns.AllowsJob(job)
}
