package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/structs"
)

// The client RPC wire protocol, served on the agent's RPC port (4647):
//
//	POST /rpc/v1/<Method>   Content-Type: application/msgpack
//
// Method is one of the ClientRPCs (NodeRegister, NodeUpdateStatus,
// NodeGetClientAllocs, AllocGetAllocs, NodeUpdateAlloc, NodeGet) or, when
// the handler's methods implement them, of the APIRPCs (rpc_api.go: the
// methods behind the HTTP API, which client-only agents forward). The body is the method's request
// struct, msgpack-encoded with "codec" struct tags only (as raft entries
// are: a node's SecretID, hidden from JSON, must cross). A success is 200
// with the response struct as the body; a failure is a non-200 status
// with an RPCError body, whose Kind is the structs.ErrorKind name, so
// that a client sees KindNotFound as KindNotFound. The request's context
// is the call's: a client that gives up cancels a blocking query.
const (
	// RPCPathPrefix prefixes every client RPC path.
	RPCPathPrefix = "/rpc/v1/"
	// RPCContentType is the media type of RPC bodies.
	RPCContentType = "application/msgpack"
	// maxRPCBodyBytes bounds a request body (an update of many allocs).
	maxRPCBodyBytes = 64 << 20
	// rpcShutdownTimeout bounds how long in-flight non-blocking calls may
	// take to finish at shutdown.
	rpcShutdownTimeout = 5 * time.Second
)

// RPCError is the body of a failed RPC.
type RPCError struct {
	// Kind is the structs.ErrorKind's String() ("not found", ...).
	Kind    string
	Message string
}

// NewRPCCodec returns the msgpack handle of RPC bodies.
func NewRPCCodec() *codec.MsgpackHandle { return newMsgpackHandle() }

// ClientRPCs are the server methods a client calls; *Server implements it.
type ClientRPCs interface {
	NodeRegister(context.Context, *structs.NodeRegisterRequest) (*structs.NodeUpdateResponse, error)
	NodeUpdateStatus(context.Context, *structs.NodeUpdateStatusRequest) (*structs.NodeUpdateResponse, error)
	NodeGetClientAllocs(context.Context, *structs.NodeSpecificRequest) (*structs.NodeClientAllocsResponse, error)
	AllocGetAllocs(context.Context, *structs.AllocsGetRequest) (*structs.AllocsGetResponse, error)
	NodeUpdateAlloc(context.Context, *structs.AllocUpdateRequest) (*structs.GenericResponse, error)
	// NodeGet lets a client find another node's HTTP address, to migrate
	// a previous allocation's data from it.
	NodeGet(context.Context, *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error)
}

var _ ClientRPCs = (*Server)(nil)

// RPCServer serves the client RPCs over HTTP/1.1 on a listener.
type RPCServer struct {
	logger *slog.Logger
	ln     net.Listener
	srv    *http.Server
	// stopRequests cancels every in-flight call's context, so that blocking
	// queries return at shutdown instead of holding it up.
	stopRequests context.CancelFunc
	done         chan struct{} // closed when Serve returns
}

// NewRPCServer returns an RPC server of rpcs on ln; Start serves it and
// Shutdown stops it (closing ln).
func NewRPCServer(rpcs ClientRPCs, ln net.Listener, logger *slog.Logger) *RPCServer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(context.Background())
	rs := &RPCServer{logger: logger, ln: ln, stopRequests: cancel, done: make(chan struct{})}
	rs.srv = &http.Server{
		Handler:           NewRPCHandler(rpcs, logger),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return rs
}

// Addr returns the listener's address.
func (rs *RPCServer) Addr() string { return rs.ln.Addr().String() }

// Start serves in a goroutine that Shutdown waits for.
func (rs *RPCServer) Start() {
	go func() {
		defer close(rs.done)
		if err := rs.srv.Serve(rs.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			rs.logger.Error("RPC server stopped", "error", err)
		}
	}()
}

// Shutdown cancels in-flight calls, closes the listener and waits for the
// serving goroutine (if Start was called).
func (rs *RPCServer) Shutdown() error {
	rs.stopRequests()
	ctx, cancel := context.WithTimeout(context.Background(), rpcShutdownTimeout)
	defer cancel()
	err := rs.srv.Shutdown(ctx)
	if err != nil {
		_ = rs.srv.Close()
	}
	select {
	case <-rs.done:
	default:
		// Never started: Shutdown closed nothing that Serve owned.
		_ = rs.ln.Close()
		return nil
	}
	if err != nil {
		return fmt.Errorf("shut down RPC server: %w", err)
	}
	return nil
}

// NewRPCHandler returns the handler of POST /rpc/v1/<Method> for rpcs: the
// client RPCs and, when rpcs implements APIRPCs (*Server does), the API
// RPCs.
func NewRPCHandler(rpcs ClientRPCs, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &rpcHandler{logger: logger, mh: newMsgpackHandle(), methods: map[string]rpcMethod{}}
	registerClientRPCs(h.methods, rpcs)
	if api, ok := rpcs.(APIRPCs); ok {
		registerAPIRPCs(h.methods, api)
	}
	return h
}

type rpcHandler struct {
	logger  *slog.Logger
	mh      *codec.MsgpackHandle
	methods map[string]rpcMethod
}

func (h *rpcHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, RPCPathPrefix)
	call := h.methods[name]
	if !ok || call == nil {
		h.writeError(w, http.StatusNotFound, structs.NewError(structs.KindNotFound, "no such RPC: %s", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.writeError(w, http.StatusMethodNotAllowed, structs.Invalid("RPC %s takes POST, not %s", name, r.Method))
		return
	}
	body := http.MaxBytesReader(w, r.Body, maxRPCBodyBytes)
	dec := func(out any) error {
		if err := codec.NewDecoder(body, h.mh).Decode(out); err != nil {
			return structs.Invalid("decode %s request: %v", name, err)
		}
		// Reach the body's end: only then does net/http watch the
		// connection, cancelling the context when the caller goes away.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return structs.Invalid("read %s request: %v", name, err)
		}
		return nil
	}
	resp, err := call(r.Context(), dec)
	if err != nil {
		h.logger.Debug("RPC failed", "method", name, "error", err)
		h.writeError(w, rpcStatus(err), err)
		return
	}
	w.Header().Set("Content-Type", RPCContentType)
	if err := codec.NewEncoder(w, h.mh).Encode(resp); err != nil {
		h.logger.Warn("write RPC response", "method", name, "error", err)
	}
}

func (h *rpcHandler) writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", RPCContentType)
	w.WriteHeader(code)
	body := &RPCError{Kind: structs.KindOf(err).String(), Message: err.Error()}
	if err := codec.NewEncoder(w, h.mh).Encode(body); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		h.logger.Debug("write RPC error", "error", err)
	}
}

// rpcStatus maps an error's kind to the response status.
func rpcStatus(err error) int {
	if k := structs.KindOf(err); k != structs.KindInternal {
		return k.HTTPStatus()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
