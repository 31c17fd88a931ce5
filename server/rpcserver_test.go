package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/structs"
)

// fakeRPCs answers the client RPCs for handler tests.
type fakeRPCs struct {
	ClientRPCs // unused methods panic
	entered    chan struct{}
}

func (f *fakeRPCs) NodeUpdateStatus(_ context.Context, req *structs.NodeUpdateStatusRequest) (*structs.NodeUpdateResponse, error) {
	switch req.NodeID {
	case "missing":
		return nil, structs.NotFound("node", req.NodeID)
	case "down":
		return nil, structs.NewError(structs.KindUnavailable, "no leader")
	}
	return &structs.NodeUpdateResponse{HeartbeatTTL: time.Second, EvalIDs: []string{req.SecretID}}, nil
}

func (f *fakeRPCs) NodeGetClientAllocs(ctx context.Context, _ *structs.NodeSpecificRequest) (*structs.NodeClientAllocsResponse, error) {
	close(f.entered)
	<-ctx.Done()
	return nil, ctx.Err()
}

func rpcBody(t *testing.T, v any) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, NewRPCCodec()).Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

func startRPCServer(t *testing.T, rpcs ClientRPCs) (*RPCServer, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := NewRPCServer(rpcs, ln, nil)
	rs.Start()
	return rs, "http://" + rs.Addr()
}

func TestRPCHandler(t *testing.T) {
	rs, base := startRPCServer(t, &fakeRPCs{})
	defer func() {
		if err := rs.Shutdown(); err != nil {
			t.Error(err)
		}
	}()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()

	tests := []struct {
		name     string
		method   string
		path     string
		body     func() *bytes.Reader
		wantCode int
		wantKind string // "" for success
	}{
		{"success", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader {
			return rpcBody(t, &structs.NodeUpdateStatusRequest{NodeID: "n1", SecretID: "s"})
		}, 200, ""},
		{"not found", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader {
			return rpcBody(t, &structs.NodeUpdateStatusRequest{NodeID: "missing"})
		}, 404, "not found"},
		{"unavailable", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader {
			return rpcBody(t, &structs.NodeUpdateStatusRequest{NodeID: "down"})
		}, 503, "unavailable"},
		{"bad body", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader { return bytes.NewReader([]byte{0xc1}) }, 400, "invalid"},
		{"unknown method", "POST", "/rpc/v1/JobRegister", func() *bytes.Reader { return bytes.NewReader(nil) }, 404, "not found"},
		{"outside the prefix", "POST", "/v1/jobs", func() *bytes.Reader { return bytes.NewReader(nil) }, 404, "not found"},
		{"GET", "GET", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader { return bytes.NewReader(nil) }, 405, "invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, tc.body())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if ct := resp.Header.Get("Content-Type"); ct != RPCContentType {
				t.Fatalf("Content-Type = %q", ct)
			}
			if tc.wantKind == "" {
				var out structs.NodeUpdateResponse
				if err := codec.NewDecoder(resp.Body, NewRPCCodec()).Decode(&out); err != nil || out.HeartbeatTTL != time.Second || out.EvalIDs[0] != "s" {
					t.Fatalf("response = %+v, %v", out, err)
				}
				return
			}
			var e RPCError
			if err := codec.NewDecoder(resp.Body, NewRPCCodec()).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if e.Kind != tc.wantKind || e.Message == "" {
				t.Fatalf("error = %+v, want kind %q", e, tc.wantKind)
			}
		})
	}
}

// TestRPCServerShutdownEndsBlockingCalls: a blocking call in flight does
// not hold up Shutdown.
func TestRPCServerShutdownEndsBlockingCalls(t *testing.T) {
	f := &fakeRPCs{entered: make(chan struct{})}
	rs, base := startRPCServer(t, f)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	done := make(chan error, 1)
	go func() {
		resp, err := hc.Post(base+"/rpc/v1/NodeGetClientAllocs", RPCContentType,
			rpcBody(t, &structs.NodeSpecificRequest{NodeID: "n1"}))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				err = errors.New(resp.Status)
			}
		}
		done <- err
	}()
	<-f.entered
	if err := rs.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("blocking call: %v", err)
	}
}

func TestRPCServerShutdownWithoutStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := NewRPCServer(&fakeRPCs{}, ln, nil).Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("listener still open")
	}
}
