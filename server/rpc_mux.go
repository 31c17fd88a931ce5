package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/tlsutil"
)

// The RPC port carries two protocols: rpcapi's wire (HTTP/1.1 POSTs, which
// clients, client-only agents and other servers send) and raft between the
// servers. A raft connection opens with raftConnByte, which no HTTP request
// starts with (a method name's first letter); anything else is HTTP. So one
// port serves both, as Nomad's does, and a server needs no second port for
// raft.
//
// With TLS (RPCTLS) a connection opens with a TLS handshake instead: its
// first byte is tlsRecordByte, the mux completes the handshake and routes
// on the first byte inside the TLS stream, so raft and the RPC calls are
// both encrypted on the same port. A plain-text connection is refused
// unless the upgrade mode allows it.
const (
	raftConnByte byte = 0x01
	// tlsRecordByte starts every TLS connection (a handshake record).
	tlsRecordByte byte = 0x16
	// muxFirstByteTimeout bounds how long a new connection may take to
	// send its first byte.
	muxFirstByteTimeout = 10 * time.Second
)

// rpcMux splits the RPC listener's connections between an HTTP listener
// and raft's stream layer. Its goroutines (the accept loop, one per
// connection while its first byte is read) stop at Close, which waits for
// them.
type rpcMux struct {
	ln     net.Listener
	tls    *RPCTLS // nil: plain text only
	logger *slog.Logger
	http   *connQueue
	raft   *connQueue

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// newRPCMux returns a mux of ln, TLS when t is set; start starts it.
func newRPCMux(ln net.Listener, t *RPCTLS, logger *slog.Logger) *rpcMux {
	ctx, cancel := context.WithCancel(context.Background())
	return &rpcMux{
		ln: ln, tls: t, logger: logger, ctx: ctx, cancel: cancel,
		http: newConnQueue(ln.Addr()), raft: newConnQueue(ln.Addr()),
	}
}

// start runs the accept loop.
func (m *rpcMux) start() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.acceptLoop()
	}()
}

func (m *rpcMux) acceptLoop() {
	for {
		conn, err := m.ln.Accept()
		if err != nil {
			if m.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				m.logger.Error("RPC listener stopped accepting", "error", err)
			}
			return
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.route(conn)
		}()
	}
}

// route reads a connection's first byte and hands it to raft or HTTP,
// after a TLS handshake when it starts one.
func (m *rpcMux) route(conn net.Conn) {
	deadline := time.Now().Add(muxFirstByteTimeout)
	_ = conn.SetDeadline(deadline)
	first, err := readByte(conn)
	if err != nil {
		_ = conn.Close()
		return
	}
	conn = &peekedConn{Conn: conn, first: first}
	if m.tls != nil {
		switch {
		case first == tlsRecordByte:
			if conn, first, err = m.handshake(conn, deadline); err != nil {
				m.logger.Debug("TLS connection closed", "remote_addr", conn.RemoteAddr().String(), "error", err)
				_ = conn.Close()
				return
			}
		case !m.tls.AllowPlaintext:
			m.logger.Warn("plain-text connection refused: the RPC port requires TLS (tls.rpc); give the caller the cluster's CA and a certificate, or set tls.rpc_upgrade_mode while moving to TLS",
				"remote_addr", conn.RemoteAddr().String())
			_ = conn.Close()
			return
		}
	}
	_ = conn.SetDeadline(time.Time{})
	q := m.http
	if first == raftConnByte {
		q = m.raft
		conn = conn.(*peekedConn).Conn // raft reads after the mark
	}
	if !q.put(m.ctx, conn) {
		_ = conn.Close()
	}
}

// handshake completes the server side of a TLS connection and reads the
// first byte inside it, checking that a raft connection comes from a
// server. The returned conn replays that byte.
func (m *rpcMux) handshake(conn net.Conn, deadline time.Time) (net.Conn, byte, error) {
	ctx, cancel := context.WithDeadline(m.ctx, deadline)
	defer cancel()
	tc := tls.Server(conn, m.tls.Server)
	if err := tc.HandshakeContext(ctx); err != nil {
		return conn, 0, fmt.Errorf("TLS handshake: %w", err)
	}
	first, err := readByte(tc)
	if err != nil {
		return tc, 0, err
	}
	if first == raftConnByte && m.tls.RaftPeerName != "" {
		cs := tc.ConnectionState()
		if len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].VerifyHostname(m.tls.RaftPeerName) != nil {
			err := fmt.Errorf("raft connection refused: the caller's certificate does not name %s (a client's certificate cannot join raft)", m.tls.RaftPeerName)
			m.logger.Warn("raft connection refused", "remote_addr", conn.RemoteAddr().String(), "error", err)
			return tc, 0, err
		}
	}
	return &peekedConn{Conn: tc, first: first}, first, nil
}

// readByte reads one byte of conn.
func readByte(conn net.Conn) (byte, error) {
	var b [1]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

// close stops the accept loop, closes the listener and both queues, and
// waits for the mux's goroutines.
func (m *rpcMux) close() {
	m.once.Do(func() {
		m.cancel()
		_ = m.ln.Close()
		m.http.Close()
		m.raft.Close()
		m.wg.Wait()
	})
}

// connQueue is a net.Listener whose connections the mux hands over.
type connQueue struct {
	addr   net.Addr
	ch     chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnQueue(addr net.Addr) *connQueue {
	return &connQueue{addr: addr, ch: make(chan net.Conn), closed: make(chan struct{})}
}

// put hands conn to the queue's Accept; false when the queue or ctx closed
// first.
func (q *connQueue) put(ctx context.Context, conn net.Conn) bool {
	select {
	case q.ch <- conn:
		return true
	case <-q.closed:
		return false
	case <-ctx.Done():
		return false
	}
}

// Accept implements net.Listener.
func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; it is idempotent.
func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.closed) })
	return nil
}

// Addr implements net.Listener.
func (q *connQueue) Addr() net.Addr { return q.addr }

// peekedConn gives back the first byte the mux read.
type peekedConn struct {
	net.Conn
	first byte
	done  bool
}

// Read implements net.Conn. The HTTP server reads a connection from one
// goroutine at a time.
func (c *peekedConn) Read(p []byte) (int, error) {
	if !c.done && len(p) > 0 {
		c.done = true
		p[0] = c.first
		return 1, nil
	}
	return c.Conn.Read(p)
}

// raftLayer is raft's StreamLayer over the mux: it accepts the raft
// connections of the RPC port and dials other servers' RPC ports with
// raftConnByte first. Its address is the advertised RPC address. Close
// closes every connection it accepted or dialed: raft's transport keeps
// dialed ones in a pool it never closes, and the other server's raft
// would wait on them for ever.
type raftLayer struct {
	q         *connQueue
	advertise net.Addr
	tls       *tls.Config // dials TLS when set

	mu     sync.Mutex // guards the fields below
	conns  map[net.Conn]struct{}
	closed bool
}

var _ raft.StreamLayer = (*raftLayer)(nil)

func newRaftLayer(q *connQueue, advertise net.Addr, tlsConfig *tls.Config) *raftLayer {
	return &raftLayer{q: q, advertise: advertise, tls: tlsConfig, conns: map[net.Conn]struct{}{}}
}

// track records conn, or closes it when the layer is closed.
func (l *raftLayer) track(conn net.Conn) (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = conn.Close()
		return nil, net.ErrClosed
	}
	l.conns[conn] = struct{}{}
	return &trackedConn{Conn: conn, layer: l}, nil
}

// Accept implements net.Listener.
func (l *raftLayer) Accept() (net.Conn, error) {
	conn, err := l.q.Accept()
	if err != nil {
		return nil, err
	}
	return l.track(conn)
}

// Close implements net.Listener: it closes the layer's connections too.
func (l *raftLayer) Close() error {
	l.mu.Lock()
	l.closed = true
	conns := l.conns
	l.conns = map[net.Conn]struct{}{}
	l.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
	return l.q.Close()
}

// trackedConn forgets itself in its layer when closed.
type trackedConn struct {
	net.Conn
	layer *raftLayer
}

// Close implements net.Conn.
func (c *trackedConn) Close() error {
	c.layer.mu.Lock()
	delete(c.layer.conns, c.Conn)
	c.layer.mu.Unlock()
	return c.Conn.Close()
}

// Addr implements net.Listener: the address other servers dial.
func (l *raftLayer) Addr() net.Addr { return l.advertise }

// Dial implements raft.StreamLayer.
func (l *raftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", string(address), timeout)
	if err != nil {
		return nil, err
	}
	if l.tls != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		conn, err = tlsutil.Handshake(ctx, conn, l.tls, string(address))
		cancel()
		if err != nil {
			return nil, fmt.Errorf("raft: %w", err)
		}
	}
	if _, err := conn.Write([]byte{raftConnByte}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("raft handshake with %s: %w", address, err)
	}
	return l.track(conn)
}
