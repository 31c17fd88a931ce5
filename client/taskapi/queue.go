package taskapi

import (
	"net"
	"sync"
)

// connQueue is the net.Listener that the Server's http.Server serves:
// Accept returns the connections the accept loop took from any socket.
type connQueue struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

var _ net.Listener = (*connQueue)(nil)

func newConnQueue() *connQueue {
	return &connQueue{ch: make(chan net.Conn), done: make(chan struct{})}
}

// put hands c to Accept; false once the queue is closed.
func (q *connQueue) put(c net.Conn) bool {
	select {
	case q.ch <- c:
		return true
	case <-q.done:
		return false
	}
}

// Accept returns the next connection, or net.ErrClosed after Close.
func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

// Close ends Accept and put.
func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.done) })
	return nil
}

// Addr names the queue (it has no address of its own).
func (q *connQueue) Addr() net.Addr { return &net.UnixAddr{Name: "task-api", Net: "unix"} }
