package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/drover-io/drover/rpcapi"
)

// rpcShutdownTimeout bounds how long in-flight non-blocking calls may take
// to finish at shutdown.
const rpcShutdownTimeout = 5 * time.Second

// RPCServer serves the server's methods (rpcapi's wire protocol) over
// HTTP/1.1 on a listener: the agent's RPC port, which clients and
// client-only agents call.
type RPCServer struct {
	logger *slog.Logger
	ln     net.Listener
	srv    *http.Server
	// stopRequests cancels every in-flight call's context, so that blocking
	// queries return at shutdown instead of holding it up.
	stopRequests context.CancelFunc
	done         chan struct{} // closed when Serve returns
}

// NewRPCServer returns an RPC server of the methods h serves (a Server's
// Handlers) on ln; Start serves it and Shutdown stops it (closing ln).
func NewRPCServer(h *rpcapi.Handlers, ln net.Listener, logger *slog.Logger) *RPCServer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(context.Background())
	rs := &RPCServer{logger: logger, ln: ln, stopRequests: cancel, done: make(chan struct{})}
	rs.srv = &http.Server{
		Handler:           rpcapi.NewHTTPHandler(h, logger),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext:       connContext, // kek_handoff.go: the caller's certificate
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
