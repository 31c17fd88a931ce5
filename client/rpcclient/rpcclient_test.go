package rpcclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"go.uber.org/goleak"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeServer answers every RPC with reply(method) and counts calls.
type fakeServer struct {
	*httptest.Server
	calls atomic.Int32
}

func newFakeServer(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		reply(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) addr() string { return strings.TrimPrefix(f.URL, "http://") }

func writeMsgpack(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	_ = codec.NewEncoder(&buf, rpcapi.NewCodec()).Encode(v)
	w.Header().Set("Content-Type", rpcapi.ContentType)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// deadAddr returns an address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func newTestClient(t *testing.T, servers ...string) *Client {
	t.Helper()
	c, err := New(&Config{Servers: servers, RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond, Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestFailoverToALiveServer(t *testing.T) {
	live := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != rpcapi.PathPrefix+rpcapi.NodeRegister.Name() || r.Method != http.MethodPost {
			writeMsgpack(w, http.StatusNotFound, rpcapi.ErrorBody{Kind: "not found", Message: r.URL.Path})
			return
		}
		var req structs.NodeRegisterRequest
		if err := codec.NewDecoder(r.Body, rpcapi.NewCodec()).Decode(&req); err != nil || req.Node.SecretID != "s3cret" {
			writeMsgpack(w, http.StatusBadRequest, rpcapi.ErrorBody{Kind: "invalid", Message: "bad body"})
			return
		}
		writeMsgpack(w, http.StatusOK, &structs.NodeUpdateResponse{HeartbeatTTL: 7 * time.Second})
	})
	c := newTestClient(t, deadAddr(t), live.addr())
	resp, err := rpcapi.NodeRegister.Call(context.Background(), c, &structs.NodeRegisterRequest{Node: &structs.Node{ID: "n1", SecretID: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.HeartbeatTTL != 7*time.Second {
		t.Fatalf("HeartbeatTTL = %v", resp.HeartbeatTTL)
	}
	if got := c.Servers()[0]; got != live.addr() {
		t.Fatalf("preferred server = %s, want the live one %s", got, live.addr())
	}
}

func TestErrorKinds(t *testing.T) {
	tests := []struct {
		name      string
		code      int
		body      any
		wantKind  structs.ErrorKind
		wantCalls int32 // per server, with 2 rounds
	}{
		{"not found is final", http.StatusNotFound, rpcapi.ErrorBody{Kind: "not found", Message: `node "x" not found`}, structs.KindNotFound, 1},
		{"invalid is final", http.StatusBadRequest, rpcapi.ErrorBody{Kind: "invalid", Message: "bad"}, structs.KindInvalid, 1},
		{"internal is final", http.StatusInternalServerError, rpcapi.ErrorBody{Kind: "internal", Message: "boom"}, structs.KindInternal, 1},
		{"unavailable is retried", http.StatusServiceUnavailable, rpcapi.ErrorBody{Kind: "unavailable", Message: "no leader"}, structs.KindUnavailable, 2},
		{"foreign answer is retried", http.StatusBadGateway, "proxy says no", structs.KindUnavailable, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if s, ok := tc.body.(string); ok {
					w.WriteHeader(tc.code)
					_, _ = w.Write([]byte(s))
					return
				}
				writeMsgpack(w, tc.code, tc.body)
			})
			c := newTestClient(t, srv.addr())
			_, err := rpcapi.NodeUpdateStatus.Call(context.Background(), c, &structs.NodeUpdateStatusRequest{NodeID: "x"})
			if err == nil {
				t.Fatal("no error")
			}
			if k := structs.KindOf(err); k != tc.wantKind {
				t.Fatalf("kind = %v (%v), want %v", k, err, tc.wantKind)
			}
			if n := srv.calls.Load(); n != tc.wantCalls {
				t.Fatalf("calls = %d, want %d", n, tc.wantCalls)
			}
		})
	}
}

func TestBlockingCallCancelled(t *testing.T) {
	serverSawCancel := make(chan struct{})
	entered := make(chan struct{})
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		close(entered)
		<-r.Context().Done()
		close(serverSawCancel)
	})
	c := newTestClient(t, srv.addr())
	ctx, cancel := context.WithCancel(context.Background())
	errCh := make(chan error, 1)
	go func() {
		_, err := rpcapi.NodeGetClientAllocs.Call(ctx, c, &structs.NodeSpecificRequest{
			NodeID: "n1", QueryOptions: structs.QueryOptions{MinQueryIndex: 5, MaxQueryTime: time.Minute}})
		errCh <- err
	}()
	<-entered
	cancel()
	select {
	case err := <-errCh:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call did not return after cancel")
	}
	select {
	case <-serverSawCancel:
	case <-time.After(10 * time.Second):
		t.Fatal("server's request context was not cancelled")
	}
}

func TestNewNeedsServers(t *testing.T) {
	for _, servers := range [][]string{nil, {""}, {"  "}} {
		if _, err := New(&Config{Servers: servers}); structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("New(%q) = %v, want an invalid error", servers, err)
		}
	}
}

func TestTimeouts(t *testing.T) {
	c := newTestClient(t, "127.0.0.1:1")
	tests := []struct {
		name string
		m    *rpcapi.Info
		req  any
		want time.Duration
	}{
		{"a read without index uses the default", rpcapi.JobList.Info(), &structs.JobListRequest{}, DefaultCallTimeout},
		{"a blocking query waits its wait plus slack", rpcapi.JobList.Info(),
			&structs.JobListRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 7, MaxQueryTime: 2 * time.Minute}}, blockingTimeout(2 * time.Minute)},
		{"a blocking query without a wait gets the default wait", rpcapi.AllocGet.Info(),
			&structs.AllocSpecificRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 7}}, blockingTimeout(structs.DefaultBlockingWait)},
		{"the client's blocking query", rpcapi.NodeGetClientAllocs.Info(),
			&structs.NodeSpecificRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 7, MaxQueryTime: time.Minute}}, blockingTimeout(time.Minute)},
		{"a write uses the default", rpcapi.JobRegister.Info(), &structs.JobRegisterRequest{}, DefaultCallTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.timeoutOf(tt.m, tt.req); got != tt.want {
				t.Errorf("timeout = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestRetriesOnlyWhatIsSafe: after a failure that leaves unknown whether
// the server applied a call (here the server answers "unavailable", as a
// server losing its leadership does), reads, idempotent and deduplicated
// writes are sent again, with the same request ID; an at-most-once write
// is not. A server that could not be reached is tried again for any call.
func TestRetriesOnlyWhatIsSafe(t *testing.T) {
	var (
		mu  sync.Mutex // guards ids
		ids []string
	)
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == rpcapi.PathPrefix+rpcapi.JobRegister.Name() {
			var req structs.JobRegisterRequest
			_ = codec.NewDecoder(r.Body, rpcapi.NewCodec()).Decode(&req)
			mu.Lock()
			ids = append(ids, req.RequestID)
			mu.Unlock()
		}
		writeMsgpack(w, http.StatusServiceUnavailable, rpcapi.ErrorBody{Kind: "unavailable", Message: "leadership lost"})
	})
	tests := []struct {
		name      string
		call      func(c *Client) error
		wantCalls int32 // with 2 rounds
	}{
		{"read", func(c *Client) error {
			_, err := rpcapi.JobList.Call(context.Background(), c, &structs.JobListRequest{})
			return err
		}, 2},
		{"idempotent", func(c *Client) error {
			_, err := rpcapi.NodeUpdateStatus.Call(context.Background(), c, &structs.NodeUpdateStatusRequest{NodeID: "n1"})
			return err
		}, 2},
		{"deduplicated", func(c *Client) error {
			_, err := rpcapi.JobRegister.Call(context.Background(), c, &structs.JobRegisterRequest{})
			return err
		}, 2},
		{"at most once", func(c *Client) error {
			_, err := rpcapi.DeploymentFail.Call(context.Background(), c, &structs.DeploymentFailRequest{DeploymentID: "d1"})
			return err
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.calls.Store(0)
			c := newTestClient(t, srv.addr())
			if err := tt.call(c); structs.KindOf(err) != structs.KindUnavailable {
				t.Fatalf("err = %v, want unavailable", err)
			}
			if n := srv.calls.Load(); n != tt.wantCalls {
				t.Errorf("calls = %d, want %d", n, tt.wantCalls)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 2 || ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("request IDs of the deduplicated write's attempts = %q, want one ID twice", ids)
	}

	// An at-most-once write whose connection broke is not sent again, and
	// its error says that it may have been applied.
	broken := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	c := newTestClient(t, broken.addr())
	_, err := rpcapi.DeploymentFail.Call(context.Background(), c, &structs.DeploymentFailRequest{DeploymentID: "d1"})
	if structs.KindOf(err) != structs.KindUnavailable || !strings.Contains(err.Error(), "may have applied it") || broken.calls.Load() != 1 {
		t.Errorf("DeploymentFail over a broken connection: %v after %d calls, want one call and an unavailable error saying it may have been applied", err, broken.calls.Load())
	}

	// An at-most-once write that never reached a server is sent to the next.
	live := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeMsgpack(w, http.StatusOK, &structs.DeploymentUpdateResponse{Index: 3})
	})
	c = newTestClient(t, deadAddr(t), live.addr())
	resp, err := rpcapi.DeploymentFail.Call(context.Background(), c, &structs.DeploymentFailRequest{DeploymentID: "d1"})
	if err != nil || resp.Index != 3 {
		t.Fatalf("DeploymentFail past a dead server = %+v, %v", resp, err)
	}
}
