package rpcapi

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// Handlers binds methods to the functions that serve them: the server's
// implementation, or a test's fake of a few methods. It is a Conn that
// calls them in process. Register every method (Handle) before the first
// call; then it is safe for concurrent use.
type Handlers struct {
	m  map[string]handler
	mw Middleware // nil: calls go straight to the handlers
}

// Middleware wraps every call of a Handlers (Use): m is the method called
// and serve calls its handler. A server routes calls so (serving them, or
// forwarding them to the leader).
type Middleware func(ctx context.Context, m *Info, req any, serve func(context.Context, any) (any, error)) (any, error)

// Use makes mw wrap every call of h's methods, in process and over the
// wire. Call it before the first call.
func (h *Handlers) Use(mw Middleware) { h.mw = mw }

// call calls the handler hd, through the middleware.
func (h *Handlers) call(ctx context.Context, hd handler, req any) (any, error) {
	if h.mw == nil {
		return hd.call(ctx, req)
	}
	return h.mw(ctx, hd.info, req, hd.call)
}

type handler struct {
	info *Info
	call func(ctx context.Context, req any) (any, error)
}

// NewHandlers returns a Handlers serving no method yet.
func NewHandlers() *Handlers { return &Handlers{m: map[string]handler{}} }

// Handle makes fn serve method m on h, replacing what served it before.
func Handle[Req, Resp any](h *Handlers, m Method[Req, Resp], fn func(context.Context, *Req) (*Resp, error)) {
	name := m.info.name
	h.m[name] = handler{info: m.info, call: func(ctx context.Context, req any) (any, error) {
		r, ok := req.(*Req)
		if !ok || r == nil {
			return nil, structs.Invalid("rpc %s: the request is a %T, not a %T", name, req, r)
		}
		resp, err := fn(ctx, r)
		if err != nil {
			return nil, err
		}
		if resp == nil {
			return nil, fmt.Errorf("rpc %s: the server gave no reply", name)
		}
		return resp, nil
	}}
}

// Serves reports whether h serves the method.
func (h *Handlers) Serves(m *Info) bool {
	got, ok := h.m[m.name]
	return ok && got.info == m
}

// lookup returns the handler of the method named name.
func (h *Handlers) lookup(name string) (handler, error) {
	got, ok := h.m[name]
	if !ok {
		return handler{}, structs.NewError(structs.KindNotFound, "no such RPC: %s (is the server an older drover?)", name)
	}
	return got, nil
}

// Invoke implements Conn: it calls the method's function in process. The
// request and the reply are shared, not copied: neither side changes them
// after the call.
func (h *Handlers) Invoke(ctx context.Context, m *Info, req any) (any, error) {
	got, err := h.lookup(m.name)
	if err != nil {
		return nil, err
	}
	return h.call(ctx, got, req)
}
