package taskapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newServer is a Server forwarding to an agent that answers with the
// path and token it got; it is closed when the test ends.
func newServer(t *testing.T) *Server {
	t.Helper()
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "agent: %s %s", r.URL.Path, r.Header.Get("Authorization"))
	}))
	t.Cleanup(agent.Close)
	s, err := New(agent.URL, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// shortDir is a temporary directory with a short path (a Unix socket's
// path is at most 107 bytes).
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "tapi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// get sends GET path with token (none if empty) over the socket sock.
func get(t *testing.T, sock, path, token string) (int, string, error) {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://task-api"+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b), nil
}

// TestManySocketsNoGoroutineEach: 50 sockets are served by the server's
// own goroutines (none per socket), each forwards its requests, and a
// stopped one is gone while the others still serve.
func TestManySocketsNoGoroutineEach(t *testing.T) {
	s := newServer(t)
	dir := shortDir(t)
	before := goleak.IgnoreCurrent()
	const n = 50
	socks := make([]string, n)
	stops := make([]func(), n)
	for i := range n {
		socks[i] = filepath.Join(dir, fmt.Sprintf("s%d.sock", i))
		stop, err := s.Listen(socks[i])
		if err != nil {
			t.Fatal(err)
		}
		stops[i] = stop
	}
	if err := goleak.Find(before); err != nil {
		t.Fatalf("listening on %d sockets started goroutines:\n%v", n, err)
	}
	if got := s.Sockets(); got != n {
		t.Fatalf("Sockets() = %d, want %d", got, n)
	}
	for i, sock := range socks {
		fi, err := os.Stat(sock)
		if err != nil || fi.Mode().Perm() != 0o666 {
			t.Fatalf("socket %d: %v, %v", i, fi, err)
		}
		code, body, err := get(t, sock, fmt.Sprintf("/v1/x/%d", i), "tok")
		if err != nil || code != 200 || body != fmt.Sprintf("agent: /v1/x/%d Bearer tok", i) {
			t.Fatalf("socket %d: %d %q %v", i, code, body, err)
		}
	}
	stops[7]()
	stops[7]() // idempotent
	if _, err := os.Lstat(socks[7]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stopped socket's file remains: %v", err)
	}
	if _, _, err := get(t, socks[7], "/", "tok"); err == nil {
		t.Error("a stopped socket still answers")
	}
	if code, _, err := get(t, socks[8], "/", "tok"); err != nil || code != 200 {
		t.Errorf("its neighbour: %d %v", code, err)
	}
	if got := s.Sockets(); got != n-1 {
		t.Errorf("Sockets() = %d, want %d", got, n-1)
	}
}

// TestTokenRequired: a request without a token gets 403 and is not
// forwarded.
func TestTokenRequired(t *testing.T) {
	s := newServer(t)
	sock := filepath.Join(shortDir(t), "api.sock")
	stop, err := s.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	code, body, err := get(t, sock, "/v1/jobs", "")
	if err != nil || code != http.StatusForbidden || !strings.Contains(body, "needs a token") {
		t.Fatalf("without a token: %d %q %v", code, body, err)
	}
}

// TestCloseEndsEverything: Close closes and removes every socket, ends
// the goroutines (goleak in TestMain), and a later Listen fails.
func TestCloseEndsEverything(t *testing.T) {
	s, err := New("http://127.0.0.1:1", nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	dir := shortDir(t)
	sock := filepath.Join(dir, "a.sock")
	stop, err := s.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	// A connection in flight is closed too.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	stop() // after Close: nothing to do
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket remains after Close: %v", err)
	}
	if _, err := s.Listen(filepath.Join(dir, "b.sock")); !errors.Is(err, ErrClosed) {
		t.Errorf("Listen after Close: %v, want ErrClosed", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Listen left its socket: %v", err)
	}
}

// TestListenErrors: a path taken by a file, or too long, is an error
// saying which path.
func TestListenErrors(t *testing.T) {
	s := newServer(t)
	dir := shortDir(t)
	taken := filepath.Join(dir, "taken")
	if err := os.WriteFile(taken, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{taken, filepath.Join(dir, strings.Repeat("x", 120))} {
		if _, err := s.Listen(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Listen(%s): %v", p, err)
		}
	}
	if b, err := os.ReadFile(taken); err != nil || string(b) != "x" {
		t.Errorf("the file in the way was changed: %q %v", b, err)
	}
}
