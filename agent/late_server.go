package agent

import (
	"context"
	"errors"
	"sync"

	"github.com/drover-io/drover/client"
	"github.com/drover-io/drover/structs"
)

// serverLink is what a combined agent's client calls on its in-process
// server: the client RPCs and the node lookup of data migration.
type serverLink interface {
	client.RPC
	client.NodeLookup
}

// lateServer is the client's link to the in-process server of a combined
// agent while that server is still being created (its raft electing
// itself): every call waits until set gives the server, or the error that
// stopped its creation, or the caller's context ends. The client can so
// be started, and restore and re-attach its tasks from local state, before
// the server exists.
type lateServer struct {
	once  sync.Once
	ready chan struct{} // closed by set
	srv   serverLink
	err   error
}

var _ serverLink = (*lateServer)(nil)

func newLateServer() *lateServer { return &lateServer{ready: make(chan struct{})} }

// set gives the server, or the error that stopped its creation; only the
// first call counts.
func (l *lateServer) set(srv serverLink, err error) {
	l.once.Do(func() {
		if srv == nil && err == nil {
			err = errors.New("no server")
		}
		l.srv, l.err = srv, err
		close(l.ready)
	})
}

// server waits for set, or for ctx to end.
func (l *lateServer) server(ctx context.Context) (serverLink, error) {
	select {
	case <-l.ready:
	case <-ctx.Done():
		return nil, structs.NewError(structs.KindUnavailable, "the server is not up yet: %v", ctx.Err())
	}
	if l.err != nil {
		return nil, structs.NewError(structs.KindUnavailable, "the server could not start: %v", l.err)
	}
	return l.srv, nil
}

// NodeRegister implements client.RPC.
func (l *lateServer) NodeRegister(ctx context.Context, req *structs.NodeRegisterRequest) (*structs.NodeUpdateResponse, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.NodeRegister(ctx, req)
}

// NodeUpdateStatus implements client.RPC.
func (l *lateServer) NodeUpdateStatus(ctx context.Context, req *structs.NodeUpdateStatusRequest) (*structs.NodeUpdateResponse, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.NodeUpdateStatus(ctx, req)
}

// NodeGetClientAllocs implements client.RPC.
func (l *lateServer) NodeGetClientAllocs(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.NodeClientAllocsResponse, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.NodeGetClientAllocs(ctx, req)
}

// AllocGetAllocs implements client.RPC.
func (l *lateServer) AllocGetAllocs(ctx context.Context, req *structs.AllocsGetRequest) (*structs.AllocsGetResponse, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.AllocGetAllocs(ctx, req)
}

// NodeUpdateAlloc implements client.RPC.
func (l *lateServer) NodeUpdateAlloc(ctx context.Context, req *structs.AllocUpdateRequest) (*structs.GenericResponse, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.NodeUpdateAlloc(ctx, req)
}

// NodeGet implements client.NodeLookup.
func (l *lateServer) NodeGet(ctx context.Context, req *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.NodeGet(ctx, req)
}
