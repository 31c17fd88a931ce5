package rpcapi

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// Class says when a call may be sent again after a failure that leaves
// unknown whether the server applied it (a timeout, a connection lost
// before the reply, a server that answered "unavailable").
type Class int

// The classes of methods.
const (
	// Read changes nothing: it may be sent again freely.
	Read Class = iota + 1
	// Idempotent is a write whose repeat changes nothing more than the
	// first did: the server compares it with the state it already made
	// (a heartbeat, a node's registration, a client's report of its
	// allocations), or it commits nothing (a plan).
	Idempotent
	// Deduplicated is a write whose request carries a request ID
	// (structs.WriteRequest) that the server remembers: a repeat is
	// answered with the first reply and applied no more.
	Deduplicated
	// AtMostOnce is a write that is none of the above: it is sent again
	// only when its first attempt never reached a server.
	AtMostOnce
)

// String names the class.
func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Idempotent:
		return "idempotent"
	case Deduplicated:
		return "deduplicated"
	case AtMostOnce:
		return "at-most-once"
	}
	return fmt.Sprintf("class-%d", int(c))
}

// SafeToRepeat reports whether a call of the class may be sent again after
// a failure that leaves unknown whether the server applied it. A
// Deduplicated call is safe only with its request ID set (Info.WithRequestID).
func (c Class) SafeToRepeat() bool { return c != AtMostOnce }

// Info describes one method without its types: what a Conn needs to carry
// a call of it.
type Info struct {
	name    string
	class   Class
	newReq  func() any
	newResp func() any
	// query returns a read's QueryOptions; nil for other classes.
	query func(req any) *structs.QueryOptions
	// withID returns a copy of a Deduplicated request with the request
	// ID set; nil for other classes.
	withID func(req any, id string) (any, string)
	// local: the server that receives a call serves it, never forwarding
	// it to the leader (its own membership, its own view of the cluster).
	local bool
}

// Local reports whether the server that receives a call of the method
// serves it itself (what it sees of the cluster, its own gossip pool);
// any other method is served by the leader, to which a follower forwards
// it (a read with AllowStale excepted).
func (i *Info) Local() bool { return i.local }

// Name returns the method's name: the last element of its wire path.
func (i *Info) Name() string { return i.name }

// Class returns the method's class.
func (i *Info) Class() Class { return i.class }

// NewRequest returns a new zero request of the method (a pointer).
func (i *Info) NewRequest() any { return i.newReq() }

// NewResponse returns a new zero response of the method (a pointer).
func (i *Info) NewResponse() any { return i.newResp() }

// Query returns the query options of a read's request, nil for a write:
// with MinQueryIndex set, the call is a blocking query that may last its
// MaxQueryTime.
func (i *Info) Query(req any) *structs.QueryOptions {
	if i.query == nil || req == nil {
		return nil
	}
	return i.query(req)
}

// WithRequestID returns req, or for a Deduplicated method whose request has
// no request ID a copy of req with a new one, so that every attempt of the
// call carries the same ID. It returns the ID ("" for other classes).
func (i *Info) WithRequestID(req any) (any, string) {
	if i.withID == nil || req == nil {
		return req, ""
	}
	return i.withID(req, structs.GenerateUUID())
}

// Conn carries calls to a server: the server's Handlers in process, or
// rpcclient.Client over the network. Invoke returns the method's response
// (a pointer of its type) or an error whose structs.ErrorKind is the
// server's.
type Conn interface {
	Invoke(ctx context.Context, m *Info, req any) (any, error)
}

// Method is the descriptor of one server method, taking a *Req and
// answering a *Resp. The method's variables in methods.go are its only
// declaration: callers use Call, the server Handle.
type Method[Req, Resp any] struct {
	info *Info
}

// Info returns the untyped description of the method.
func (m Method[Req, Resp]) Info() *Info { return m.info }

// Name returns the method's name.
func (m Method[Req, Resp]) Name() string { return m.info.name }

// Call invokes the method on c.
func (m Method[Req, Resp]) Call(ctx context.Context, c Conn, req *Req) (*Resp, error) {
	out, err := c.Invoke(ctx, m.info, req)
	if err != nil {
		return nil, err
	}
	resp, ok := out.(*Resp)
	if !ok || resp == nil {
		return nil, fmt.Errorf("rpc %s: the reply is a %T, not a %T", m.info.name, out, resp)
	}
	return resp, nil
}

// queryRequest is a read's request: it embeds structs.QueryOptions.
type queryRequest[T any] interface {
	*T
	QueryOpts() *structs.QueryOptions
}

// writeRequest is a deduplicated write's request: it embeds
// structs.WriteRequest.
type writeRequest[T any] interface {
	*T
	WriteOpts() *structs.WriteRequest
}

func newInfo[Req, Resp any](name string, class Class) *Info {
	return &Info{
		name:    name,
		class:   class,
		newReq:  func() any { return new(Req) },
		newResp: func() any { return new(Resp) },
	}
}

// read declares a method that changes nothing.
func read[Req, Resp any, P queryRequest[Req]](name string) Method[Req, Resp] {
	i := newInfo[Req, Resp](name, Read)
	i.query = func(req any) *structs.QueryOptions {
		if r, ok := req.(*Req); ok && r != nil {
			return P(r).QueryOpts()
		}
		return nil
	}
	return Method[Req, Resp]{info: i}
}

// idempotent declares a write that may be applied twice to the same
// effect; its declaration says why.
func idempotent[Req, Resp any](name string) Method[Req, Resp] {
	return Method[Req, Resp]{info: newInfo[Req, Resp](name, Idempotent)}
}

// deduplicated declares a write that the server applies once per request
// ID.
func deduplicated[Req, Resp any, P writeRequest[Req]](name string) Method[Req, Resp] {
	i := newInfo[Req, Resp](name, Deduplicated)
	i.withID = func(req any, id string) (any, string) {
		r, ok := req.(*Req)
		if !ok || r == nil {
			return req, ""
		}
		if have := P(r).WriteOpts().RequestID; have != "" {
			return req, have
		}
		c := *r
		P(&c).WriteOpts().RequestID = id
		return &c, id
	}
	return Method[Req, Resp]{info: i}
}

// atMostOnce declares a write that must not be sent again once it may
// have reached a server.
func atMostOnce[Req, Resp any](name string) Method[Req, Resp] {
	return Method[Req, Resp]{info: newInfo[Req, Resp](name, AtMostOnce)}
}

// served declares m served by the server that receives it (Info.Local).
func served[Req, Resp any](m Method[Req, Resp]) Method[Req, Resp] {
	m.info.local = true
	return m
}
