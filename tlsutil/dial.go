package tlsutil

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// DialContext returns a dial function (for http.Transport.DialContext)
// that connects with d and completes a TLS handshake with cfg before
// returning. The HTTP layer above sees a plain connection, so the RPC
// wire keeps its http:// URLs while the bytes cross in TLS; a refused
// handshake is a dial error (*net.OpError, Op "dial"): nothing was sent.
func DialContext(d *net.Dialer, cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Handshake(ctx, conn, cfg, addr)
	}
}

// Handshake runs a client handshake with cfg over conn (closing it on
// failure); addr names the peer in the error.
func Handshake(ctx context.Context, conn net.Conn, cfg *tls.Config, addr string) (net.Conn, error) {
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: conn.RemoteAddr(),
			Err: fmt.Errorf("TLS handshake with %s: %w", addr, err)}
	}
	return tc, nil
}
