package httpapi

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// nodesBackend is an opsBackend that also knows nodes and their HTTP
// addresses.
type nodesBackend struct {
	*opsBackend
	nodes []*structs.Node
}

// handlers binds the server's methods to the fake.
func (b *nodesBackend) handlers() *rpcapi.Handlers {
	h := b.opsBackend.handlers()
	rpcapi.Handle(h, rpcapi.NodeGet, b.NodeGet)
	rpcapi.Handle(h, rpcapi.AllocNode, allocNode(b.AllocGet, b.NodeGet))
	return h
}

func (b *nodesBackend) NodeGet(_ context.Context, r *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	for _, n := range b.nodes {
		if strings.HasPrefix(n.ID, r.NodeID) {
			return &structs.SingleNodeResponse{Node: n}, nil
		}
	}
	return nil, structs.NotFound("node", r.NodeID)
}

// seenRequest is what the other node's fake agent received.
type seenRequest struct {
	method, uri, by, body string
}

// otherAgent is the fake agent of another node: it records requests and
// answers by path.
type otherAgent struct {
	mu   sync.Mutex // guards the field below
	seen []seenRequest

	release chan struct{} // lets /stream finish
}

func (o *otherAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o.mu.Lock()
	o.seen = append(o.seen, seenRequest{r.Method, r.URL.RequestURI(), r.Header.Get(forwardedHeader), string(body)})
	o.mu.Unlock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/client/fs/logs/"):
		// A log that follows: the first frame must reach the caller
		// before the stream ends.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-o.release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "second\n")
	case strings.HasPrefix(r.URL.Path, "/v1/client/fs/stat/"):
		http.Error(w, "no such file", http.StatusNotFound)
	default:
		w.Header().Set("X-Other", "yes")
		_, _ = io.WriteString(w, `{"from":"other"}`)
	}
}

func (o *otherAgent) last() seenRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) == 0 {
		return seenRequest{}
	}
	return o.seen[len(o.seen)-1]
}

// newForwardingServer serves the API of an agent on testNodeID (or of a
// server-only agent, without client) in a cluster where remote-1 runs on
// otherNodeID (served by the returned fake agent) and gone-1 on a node
// whose agent is unreachable.
func newForwardingServer(t *testing.T, withClient bool) (*httptest.Server, *otherAgent) {
	t.Helper()
	other := &otherAgent{release: make(chan struct{})}
	ots := httptest.NewServer(other)
	t.Cleanup(ots.Close)
	t.Cleanup(func() { close(other.release) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	_ = ln.Close()

	local := &fakeNodeClient{}
	dir := t.TempDir()
	local.dirs = map[string]string{"local-1": dir}
	b := &nodesBackend{
		opsBackend: &opsBackend{fakeBackend: &fakeBackend{}, allocs: []*structs.Allocation{
			testAlloc("local-1", testNodeID, "web"),
			testAlloc("remote-1", otherNodeID, "web"),
			testAlloc("gone-1", "node-0003-cccc", "web"),
		}},
		nodes: []*structs.Node{
			{ID: testNodeID, Name: "local", HTTPAddr: ots.Listener.Addr().String()},
			{ID: otherNodeID, Name: "other", Status: structs.NodeStatusReady, HTTPAddr: ots.Listener.Addr().String()},
			{ID: "node-0003-cccc", Name: "gone", Status: structs.NodeStatusReady, HTTPAddr: deadAddr},
		},
	}
	var client NodeClient
	if withClient {
		client = local
	}
	_, ts := serveAPI(t, b.handlers(), client)
	return ts, other
}

func TestForwardClientRequests(t *testing.T) {
	tests := []struct {
		name       string
		noClient   bool
		method     string
		path       string
		header     string // forwardedHeader's value, if any
		body       string
		wantCode   int
		wantBody   string
		wantURI    string // what the other agent saw; "" when nothing is forwarded
		wantBy     string
		wantHeader string // X-Other, copied back
	}{
		{name: "fs ls of a remote alloc", method: "GET", path: "/v1/client/fs/ls/remote-1?path=web%2Flocal",
			wantCode: 200, wantBody: `{"from":"other"}`, wantURI: "/v1/client/fs/ls/remote-1?path=web%2Flocal", wantBy: testNodeID, wantHeader: "yes"},
		{name: "prefix of a remote alloc", method: "GET", path: "/v1/client/fs/cat/remote?path=x",
			wantCode: 200, wantURI: "/v1/client/fs/cat/remote?path=x", wantBy: testNodeID},
		{name: "status code kept", method: "GET", path: "/v1/client/fs/stat/remote-1?path=nope",
			wantCode: 404, wantBody: "no such file", wantURI: "/v1/client/fs/stat/remote-1?path=nope", wantBy: testNodeID},
		{name: "restart with a body", method: "PUT", path: "/v1/client/allocation/remote-1/restart", body: `{"TaskName":"web"}`,
			wantCode: 200, wantURI: "/v1/client/allocation/remote-1/restart", wantBy: testNodeID},
		{name: "gc of another node", method: "GET", path: "/v1/client/gc?node_id=node-0002",
			wantCode: 200, wantURI: "/v1/client/gc?node_id=node-0002", wantBy: testNodeID},
		{name: "stats of another node", method: "GET", path: "/v1/client/stats?node_id=" + otherNodeID,
			wantCode: 200, wantURI: "/v1/client/stats?node_id=" + otherNodeID, wantBy: testNodeID},
		{name: "local alloc served here", method: "PUT", path: "/v1/client/allocation/local-1/restart", wantCode: 200, wantBody: `{"Index":0}`},
		{name: "gc of this node served here", method: "GET", path: "/v1/client/gc?node_id=node-0001", wantCode: 200, wantBody: "done-1"},
		{name: "a forwarded request is not forwarded again", method: "GET", path: "/v1/client/fs/ls/remote-1", header: "node-9",
			wantCode: 400, wantBody: "runs on node node-000"},
		{name: "unknown alloc", method: "GET", path: "/v1/client/fs/ls/zzz", wantCode: 404, wantBody: `allocation "zzz" not found`},
		{name: "unknown node", method: "GET", path: "/v1/client/gc?node_id=node-9", wantCode: 404, wantBody: `node "node-9" not found`},
		{name: "unreachable node", method: "GET", path: "/v1/client/fs/ls/gone-1", wantCode: 502,
			wantBody: "node node-000 (gone, status ready) at 127.0.0.1:"},
		{name: "server-only agent forwards a local-looking alloc", noClient: true, method: "PUT", path: "/v1/client/allocation/local-1/signal",
			wantCode: 200, wantURI: "/v1/client/allocation/local-1/signal", wantBy: "server"},
		{name: "non-client endpoints are not forwarded", method: "GET", path: "/v1/allocation/remote-1", wantCode: 200, wantBody: `"ID":"remote-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, other := newForwardingServer(t, !tt.noClient)
			req, err := http.NewRequest(tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.header != "" {
				req.Header.Set(forwardedHeader, tt.header)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode || !strings.Contains(string(b), tt.wantBody) {
				t.Errorf("%s %s = %d %q, want %d with %q", tt.method, tt.path, resp.StatusCode, b, tt.wantCode, tt.wantBody)
			}
			if got := resp.Header.Get("X-Other"); tt.wantHeader != "" && got != tt.wantHeader {
				t.Errorf("X-Other = %q, want %q", got, tt.wantHeader)
			}
			seen := other.last()
			if seen.uri != tt.wantURI || seen.by != tt.wantBy {
				t.Errorf("the other agent saw %+v, want URI %q by %q", seen, tt.wantURI, tt.wantBy)
			}
			if tt.wantURI != "" && (seen.method != tt.method || seen.body != tt.body) {
				t.Errorf("the other agent saw %s %q, want %s %q", seen.method, seen.body, tt.method, tt.body)
			}
		})
	}
}

// TestForwardStreams checks that a forwarded answer streams: the first
// frame of a log that follows arrives while the other agent still holds
// the response open.
func TestForwardStreams(t *testing.T) {
	ts, other := newForwardingServer(t, true)
	resp, err := ts.Client().Get(ts.URL + "/v1/client/fs/logs/remote-1?task=web&type=stdout&follow=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first frame = %q, %v", line, err)
	}
	other.release <- struct{}{}
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "second\n" {
		t.Fatalf("rest = %q, %v", rest, err)
	}
}
