package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The RPC port carries two protocols: rpcapi's wire (HTTP/1.1 POSTs, which
// clients, client-only agents and other servers send) and raft between the
// servers. A raft connection opens with raftConnByte, which no HTTP request
// starts with (a method name's first letter); anything else is HTTP. So one
// port serves both, as Nomad's does, and a server needs no second port for
// raft.
const (
	raftConnByte byte = 0x01
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
	logger *slog.Logger
	http   *connQueue
	raft   *connQueue

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// newRPCMux returns a mux of ln; start starts it.
func newRPCMux(ln net.Listener, logger *slog.Logger) *rpcMux {
	ctx, cancel := context.WithCancel(context.Background())
	return &rpcMux{
		ln: ln, logger: logger, ctx: ctx, cancel: cancel,
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

// route reads a connection's first byte and hands it to raft or HTTP.
func (m *rpcMux) route(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(muxFirstByteTimeout))
	var first [1]byte
	if _, err := io.ReadFull(conn, first[:]); err != nil {
		_ = conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	q := m.http
	if first[0] == raftConnByte {
		q = m.raft
	} else {
		conn = &peekedConn{Conn: conn, first: first[0]}
	}
	if !q.put(m.ctx, conn) {
		_ = conn.Close()
	}
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

	mu     sync.Mutex // guards the fields below
	conns  map[net.Conn]struct{}
	closed bool
}

var _ raft.StreamLayer = (*raftLayer)(nil)

func newRaftLayer(q *connQueue, advertise net.Addr) *raftLayer {
	return &raftLayer{q: q, advertise: advertise, conns: map[net.Conn]struct{}{}}
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
	if _, err := conn.Write([]byte{raftConnByte}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("raft handshake with %s: %w", address, err)
	}
	return l.track(conn)
}
