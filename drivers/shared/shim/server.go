package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// requestTimeout bounds how long a client may take to send its request,
// and the shim to write a response.
const requestTimeout = 10 * time.Second

// server answers requests on the shim's unix socket.
type server struct {
	ln  net.Listener
	sup *supervisor
	log *slog.Logger
	// memoryBase is the memory limit's base (settleMemory); 0 leaves the
	// limit alone.
	memoryBase int64
	wg         sync.WaitGroup // connection handlers

	mu       sync.Mutex // guards the field below
	inFlight int        // requests being handled
}

// listen removes a stale socket and listens on path, readable by the
// shim's user only.
func listen(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale shim socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on shim socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("restrict shim socket: %w", err)
	}
	return ln, nil
}

// serve accepts connections until the listener is closed; each is
// handled on its own goroutine, tracked by s.wg. ctx cancels handlers.
func (s *server) serve(ctx context.Context) {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		s.track(1)
		s.wg.Go(func() {
			defer s.track(-1)
			s.handle(ctx, conn)
		})
	}
}

// track counts requests in flight and makes room for them under the
// memory limit.
func (s *server) track(delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight += delta
	if s.memoryBase > 0 {
		setMemoryLimit(s.memoryBase, s.inFlight)
	}
}

// handle serves one request on conn.
func (s *server) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()

	_ = conn.SetReadDeadline(time.Now().Add(requestTimeout))
	br := bufio.NewReaderSize(conn, 512)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return
	}
	var req request
	resp := response{V: protocolVersion}
	if err := json.Unmarshal(line, &req); err != nil {
		resp.Error = fmt.Sprintf("malformed request: %v", err)
	} else if req.V != protocolVersion {
		resp.Error = fmt.Sprintf("this shim speaks protocol version %d, request has %d", protocolVersion, req.V)
	} else {
		_ = conn.SetReadDeadline(time.Time{})
		// The request ends when the client hangs up.
		reqCtx, cancel := context.WithCancel(ctx)
		hungUp := make(chan struct{})
		go func() {
			defer close(hungUp)
			var b [1]byte
			_, _ = br.Read(b[:])
			cancel()
		}()
		s.dispatch(reqCtx, &req, &resp)
		// Unblock the hang-up reader and wait for it.
		_ = conn.SetReadDeadline(time.Now())
		<-hungUp
		cancel()
	}
	_ = conn.SetWriteDeadline(time.Now().Add(requestTimeout))
	b, _ := json.Marshal(&resp)
	_, _ = conn.Write(append(b, '\n'))
}

func (s *server) dispatch(ctx context.Context, req *request, resp *response) {
	var err error
	switch req.Op {
	case opStatus:
		resp.Status = s.sup.status()
	case opSignal:
		err = s.sup.signal(syscall.Signal(req.Signal))
	case opStop:
		if req.Signal <= 0 || req.Timeout < 0 {
			err = errors.New("stop needs a signal and a non-negative timeout")
			break
		}
		s.sup.stop(syscall.Signal(req.Signal), req.Timeout)
		resp.Exit, err = s.sup.waitExit(ctx)
	case opStats:
		resp.Usage, err = s.sup.stats.sample()

	case opWait:
		resp.Exit, err = s.sup.waitExit(ctx)
	default:
		err = fmt.Errorf("unknown operation %q", req.Op)
	}
	if err != nil {
		resp.Error = err.Error()
	}
}
