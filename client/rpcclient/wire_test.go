package rpcclient_test

// This test joins the two halves of the RPC transport (server.NewRPCHandler
// and this client) to prove they agree on the wire. It lives in an external
// test package: production code in client/ never imports server/.

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// TestNodeGetOverTheWire proves a client-only agent can look up another
// node (its HTTP address) through the real server handler, as remote
// ephemeral-disk migration needs.
func TestNodeGetOverTheWire(t *testing.T) {
	rpcs := &nodeGetRPCs{node: &structs.Node{ID: "n1", HTTPAddr: "10.0.0.7:4646"}}
	srv := httptest.NewServer(server.NewRPCHandler(rpcs, nil))
	t.Cleanup(srv.Close)
	c, err := rpcclient.New(&rpcclient.Config{Servers: []string{strings.TrimPrefix(srv.URL, "http://")}, RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)

	resp, err := c.NodeGet(context.Background(), &structs.NodeSpecificRequest{NodeID: "n1"})
	if err != nil {
		t.Fatalf("NodeGet: %v", err)
	}
	if resp.Node == nil || resp.Node.HTTPAddr != "10.0.0.7:4646" {
		t.Fatalf("node = %+v", resp.Node)
	}
	_, err = c.NodeGet(context.Background(), &structs.NodeSpecificRequest{NodeID: "nope"})
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("unknown node: err = %v, want not found", err)
	}
}

type nodeGetRPCs struct {
	server.ClientRPCs // other methods are not called
	node              *structs.Node
}

func (f *nodeGetRPCs) NodeGet(_ context.Context, req *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	if req.NodeID != f.node.ID {
		return nil, structs.NotFound("node", req.NodeID)
	}
	return &structs.SingleNodeResponse{Node: f.node}, nil
}
