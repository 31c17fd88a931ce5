package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// blockingHandlers serves NodeGetClientAllocs as a call that blocks until
// its context ends; entered is closed when it starts.
func blockingHandlers(entered chan struct{}) *rpcapi.Handlers {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NodeGetClientAllocs, func(ctx context.Context, _ *structs.NodeSpecificRequest) (*structs.NodeClientAllocsResponse, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return h
}

func rpcBody(t *testing.T, v any) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, rpcapi.NewCodec()).Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

func startRPCServer(t *testing.T, h *rpcapi.Handlers) (*RPCServer, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := NewRPCServer(h, ln, nil)
	rs.Start()
	return rs, "http://" + rs.Addr()
}

// TestRPCServerShutdownEndsBlockingCalls: a blocking call in flight does
// not hold up Shutdown.
func TestRPCServerShutdownEndsBlockingCalls(t *testing.T) {
	entered := make(chan struct{})
	rs, base := startRPCServer(t, blockingHandlers(entered))
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	done := make(chan error, 1)
	go func() {
		resp, err := hc.Post(base+rpcapi.PathPrefix+rpcapi.NodeGetClientAllocs.Name(), rpcapi.ContentType,
			rpcBody(t, &structs.NodeSpecificRequest{NodeID: "n1"}))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				err = errors.New(resp.Status)
			}
		}
		done <- err
	}()
	<-entered
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
	if err := NewRPCServer(rpcapi.NewHandlers(), ln, nil).Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("listener still open")
	}
}
