package rpcclient_test

// These tests join the two halves of the RPC transport (rpcapi's HTTP
// handler, as the server serves it, and this client) to prove they agree
// on the wire.

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TestNodeGetOverTheWire proves a client-only agent can look up another
// node (its HTTP address) through the server's handler, as remote
// ephemeral-disk migration needs.
func TestNodeGetOverTheWire(t *testing.T) {
	node := &structs.Node{ID: "n1", HTTPAddr: "10.0.0.7:4646"}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NodeGet, func(_ context.Context, req *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
		if req.NodeID != node.ID {
			return nil, structs.NotFound("node", req.NodeID)
		}
		return &structs.SingleNodeResponse{Node: node}, nil
	})
	srv := httptest.NewServer(rpcapi.NewHTTPHandler(h, nil))
	t.Cleanup(srv.Close)
	c, err := rpcclient.New(&rpcclient.Config{Servers: []string{strings.TrimPrefix(srv.URL, "http://")}, RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)

	resp, err := rpcapi.NodeGet.Call(context.Background(), c, &structs.NodeSpecificRequest{NodeID: "n1"})
	if err != nil {
		t.Fatalf("NodeGet: %v", err)
	}
	if resp.Node == nil || resp.Node.HTTPAddr != "10.0.0.7:4646" {
		t.Fatalf("node = %+v", resp.Node)
	}
	_, err = rpcapi.NodeGet.Call(context.Background(), c, &structs.NodeSpecificRequest{NodeID: "nope"})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("unknown node: err = %v, want not found", err)
	}
}
