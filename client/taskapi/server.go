package taskapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by Listen after Close.
var ErrClosed = errors.New("task API server is closed")

// Server serves the task API sockets of many tasks: one goroutine waits on
// all of them (epoll) and accepts, and one http.Server serves what they
// accept. Its zero value is not usable; call New, then Close when done.
type Server struct {
	logger *slog.Logger
	epfd   int
	wake   int // an eventfd that tells the accept loop to return
	srv    *http.Server
	conns  *connQueue
	wg     sync.WaitGroup // the accept loop and the http.Server

	mu sync.Mutex // guards the fields below, and each socket's fd while registered
	// socks maps a listening socket's fd to its path.
	socks  map[int]string
	closed bool
}

// New returns a Server forwarding to the agent's HTTP API at agentURL
// ("http://127.0.0.1:4646") through transport (nil: the default one), and
// starts its two goroutines.
func New(agentURL string, transport http.RoundTripper, logger *slog.Logger) (*Server, error) {
	target, err := url.Parse(agentURL)
	if err != nil {
		return nil, fmt.Errorf("task API: agent address %q: %w", agentURL, err)
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("task API: epoll: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("task API: eventfd: %w", err)
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		unix.Close(wake)
		unix.Close(epfd)
		return nil, fmt.Errorf("task API: epoll: %w", err)
	}
	s := &Server{
		logger: logger,
		epfd:   epfd,
		wake:   wake,
		conns:  newConnQueue(),
		socks:  make(map[int]string),
		srv: &http.Server{
			Handler:           Handler(target, transport),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		},
	}
	s.wg.Go(s.acceptLoop)
	s.wg.Go(func() {
		if err := s.srv.Serve(s.conns); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("task API stopped", "error", err)
		}
	})
	return s, nil
}

// Listen makes a socket at path (mode 0666: the directory holding it
// guards it) and serves the task API on it until the returned stop is
// called, which closes the socket and removes it. The caller makes sure
// that nothing but a stale socket is at path.
func (s *Server) Listen(path string) (stop func(), err error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("task API: socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("task API: listen on %s: %w", path, err)
	}
	fail := func(err error) (func(), error) {
		unix.Close(fd)
		_ = os.Remove(path)
		return nil, fmt.Errorf("task API: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		return fail(err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		return fail(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fail(ErrClosed)
	}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
		return fail(fmt.Errorf("epoll: %w", err))
	}
	s.socks[fd] = path
	var once sync.Once
	return func() { once.Do(func() { s.unlisten(fd) }) }, nil
}

// unlisten closes the socket fd and removes its file.
func (s *Server) unlisten(fd int) {
	s.mu.Lock()
	path, ok := s.socks[fd]
	if ok {
		delete(s.socks, fd)
		_ = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		unix.Close(fd)
	}
	s.mu.Unlock()
	if ok {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.logger.Debug("task API: remove socket", "path", path, "error", err)
		}
	}
}

// Sockets returns how many sockets are served.
func (s *Server) Sockets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.socks)
}

// Close stops serving: it closes every socket (and removes it), the
// connections, and waits for its goroutines. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	fds := make([]int, 0, len(s.socks))
	for fd := range s.socks {
		fds = append(fds, fd)
	}
	s.mu.Unlock()
	for _, fd := range fds {
		s.unlisten(fd)
	}
	var one = [8]byte{1}
	if _, err := unix.Write(s.wake, one[:]); err != nil {
		return fmt.Errorf("task API: wake the accept loop: %w", err)
	}
	err := s.srv.Close() // closes s.conns, which ends Serve
	s.wg.Wait()
	unix.Close(s.wake)
	unix.Close(s.epfd)
	return err
}

// acceptLoop waits on every socket and accepts their connections until
// Close wakes it. It blocks a thread in epoll_wait, not a goroutine per
// socket in the runtime's poller.
func (s *Server) acceptLoop() {
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(s.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			s.logger.Error("task API: epoll_wait failed; the task API sockets are no longer served", "error", err)
			return
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == s.wake {
				return
			}
			for _, c := range s.accept(fd) {
				if !s.conns.put(c) {
					c.Close()
				}
			}
		}
	}
}

// accept takes the connections waiting on socket fd. The lock keeps fd
// open (and its number not reused) while it accepts; accept4 on a
// non-blocking socket does not wait.
func (s *Server) accept(fd int) []net.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	path, ok := s.socks[fd]
	if !ok {
		return nil // closed since epoll_wait returned
	}
	var conns []net.Conn
	for {
		nfd, _, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNABORTED) {
			continue
		}
		if err != nil {
			if !errors.Is(err, unix.EAGAIN) {
				s.logger.Warn("task API: accept", "path", path, "error", err)
			}
			return conns
		}
		f := os.NewFile(uintptr(nfd), "task API connection")
		c, err := net.FileConn(f) // a dup, in the runtime's poller
		f.Close()
		if err != nil {
			s.logger.Warn("task API: accept", "path", path, "error", err)
			continue
		}
		conns = append(conns, c)
	}
}

// Handler forwards requests that carry a token to the agent's API at
// target through transport (nil: the default one); others get 403. The
// agent's API then serves a workload identity as its task only.
func Handler(target *url.URL, transport http.RoundTripper) http.Handler {
	rp := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "task API: the agent's HTTP API is unreachable: "+err.Error(), http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hasToken(r) {
			http.Error(w, "Permission denied: the task API needs a token: send the task's workload identity "+
				"(identity { env = true } gives it as NOMAD_TOKEN) as X-Nomad-Token or Authorization: Bearer", http.StatusForbidden)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// hasToken reports whether a request carries a token.
func hasToken(r *http.Request) bool {
	if r.Header.Get("X-Nomad-Token") != "" {
		return true
	}
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && strings.TrimSpace(v) != ""
}
