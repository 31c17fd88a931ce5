package agent

import (
	"context"
	"errors"
	"sync"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// lateServer is the client's link to the in-process server of a combined
// agent while that server is still being created (its raft electing
// itself): every call waits until set gives the server, or the error that
// stopped its creation, or the caller's context ends. The client can so
// be started, and restore and re-attach its tasks from local state, before
// the server exists.
type lateServer struct {
	once  sync.Once
	ready chan struct{} // closed by set
	srv   rpcapi.Conn
	err   error
}

var _ rpcapi.Conn = (*lateServer)(nil)

func newLateServer() *lateServer { return &lateServer{ready: make(chan struct{})} }

// set gives the server, or the error that stopped its creation; only the
// first call counts.
func (l *lateServer) set(srv rpcapi.Conn, err error) {
	l.once.Do(func() {
		if srv == nil && err == nil {
			err = errors.New("no server")
		}
		l.srv, l.err = srv, err
		close(l.ready)
	})
}

// Invoke implements rpcapi.Conn: it waits for the server, or for ctx to
// end, then calls it.
func (l *lateServer) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	select {
	case <-l.ready:
	case <-ctx.Done():
		return nil, structs.NewError(structs.KindUnavailable, "the server is not up yet: %v", ctx.Err())
	}
	if l.err != nil {
		return nil, structs.NewError(structs.KindUnavailable, "the server could not start: %v", l.err)
	}
	return l.srv.Invoke(ctx, m, req)
}
