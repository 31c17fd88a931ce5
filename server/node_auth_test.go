package server

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// stranger calls the RPC port as anyone on the network can: plain HTTP
// with msgpack bodies, knowing only what the port itself gives away.
type stranger struct {
	t    *testing.T
	base string
	hc   *http.Client
}

// call POSTs req to method m and returns the status code, decoding a 200
// body into out and a failure into an rpcapi.ErrorBody.
func (c *stranger) call(m *rpcapi.Info, req, out any) (int, rpcapi.ErrorBody) {
	c.t.Helper()
	method := m.Name()
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, rpcapi.NewCodec()).Encode(req); err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.hc.Post(c.base+rpcapi.PathPrefix+method, rpcapi.ContentType, &buf)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	var rerr rpcapi.ErrorBody
	dec := codec.NewDecoder(resp.Body, rpcapi.NewCodec())
	if resp.StatusCode == http.StatusOK {
		if err := dec.Decode(out); err != nil {
			c.t.Fatalf("%s: decode response: %v", method, err)
		}
	} else if err := dec.Decode(&rerr); err != nil {
		c.t.Fatalf("%s: decode error body: %v", method, err)
	}
	return resp.StatusCode, rerr
}

// TestRPCNodeForgeryRefused replays issue 19's forgery over the real RPC
// port: a stranger reads the node (no secret comes back), then tries to
// mark it down, re-register it, report its allocations failed and watch
// them, with no secret and with a wrong one. Every node call is refused
// with 403, and the node stays ready with its allocations running.
func TestRPCNodeForgeryRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		node := testNode("n1", 4000, 4096)
		registerNode(t, s, node)
		r := registerJob(t, s, testJob("web", 2, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		allocs := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
		if len(allocs) != 2 {
			t.Fatalf("placed %d allocs, want 2", len(allocs))
		}
		var running []*structs.Allocation
		for _, a := range allocs {
			running = append(running, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning})
		}
		if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "n1", SecretID: node.SecretID, Alloc: running}); err != nil {
			t.Fatal(err)
		}
		evalsBefore, err := s.State().Evals(nil)
		if err != nil {
			t.Fatal(err)
		}

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rs := NewRPCServer(s.Handlers(), ln, nil)
		rs.Start()
		defer func() {
			if err := rs.Shutdown(); err != nil {
				t.Error(err)
			}
		}()
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		c := &stranger{t: t, base: "http://" + rs.Addr(), hc: hc}

		// What the port tells anyone: the node, but never its secret.
		var got structs.SingleNodeResponse
		if code, e := c.call(rpcapi.NodeGet.Info(), &structs.NodeSpecificRequest{NodeID: "n1"}, &got); code != http.StatusOK {
			t.Fatalf("NodeGet: %d %+v", code, e)
		}
		if got.Node == nil || got.Node.ID != "n1" {
			t.Fatalf("NodeGet returned %+v", got.Node)
		}
		if got.Node.SecretID != "" {
			t.Fatalf("NodeGet leaked the node's secret %q", got.Node.SecretID)
		}
		var list structs.NodeListResponse
		if code, e := c.call(rpcapi.NodeList.Info(), &structs.NodeListRequest{}, &list); code != http.StatusOK || len(list.Nodes) != 1 {
			t.Fatalf("NodeList: %d %+v %+v", code, e, list)
		}

		for _, secret := range []string{"", "wrong", got.Node.SecretID} {
			forged := []struct {
				method *rpcapi.Info
				req    any
			}{
				{rpcapi.NodeUpdateStatus.Info(), &structs.NodeUpdateStatusRequest{NodeID: "n1", SecretID: secret, Status: structs.NodeStatusDown}},
				{rpcapi.NodeRegister.Info(), &structs.NodeRegisterRequest{Node: &structs.Node{ID: "n1", SecretID: secret, Status: structs.NodeStatusDown}}},
				{rpcapi.NodeUpdateAlloc.Info(), &structs.AllocUpdateRequest{NodeID: "n1", SecretID: secret, Alloc: []*structs.Allocation{
					{ID: allocs[0].ID, ClientStatus: structs.AllocClientStatusFailed}}}},
				{rpcapi.NodeGetClientAllocs.Info(), &structs.NodeSpecificRequest{NodeID: "n1", SecretID: secret}},
			}
			for _, f := range forged {
				var out map[string]any
				code, e := c.call(f.method, f.req, &out)
				if code != http.StatusForbidden || e.Kind != structs.KindPermission.String() {
					t.Errorf("%s with secret %q: status %d %+v, want 403 %q", f.method.Name(), secret, code, e, structs.KindPermission)
				}
			}
		}

		n, err := s.State().NodeByID(nil, "n1")
		if err != nil || n.Status != structs.NodeStatusReady {
			t.Fatalf("node after forgery: %+v, %v; want ready", n, err)
		}
		for _, a := range allocsOf(t, s, "web", "") {
			if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientStatus != structs.AllocClientStatusRunning {
				t.Errorf("alloc %s after forgery: desired %s, client %s", a.ID, a.DesiredStatus, a.ClientStatus)
			}
		}
		evalsAfter, err := s.State().Evals(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(evalsAfter) != len(evalsBefore) {
			t.Errorf("the forgery created %d evaluations", len(evalsAfter)-len(evalsBefore))
		}
	})
}

// TestNodeAuth covers each node call's secret check in process.
func TestNodeAuth(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerNode(t, s, testNode("n1", 1000, 1000))
	registerNode(t, s, testNode("n2", 1000, 1000))

	tests := []struct {
		name string
		call func() error
		want structs.ErrorKind
	}{
		{"register without secret", func() error {
			n := testNode("n3", 1000, 1000)
			n.SecretID = ""
			_, err := s.NodeRegister(ctx, &structs.NodeRegisterRequest{Node: n})
			return err
		}, structs.KindPermission},
		{"re-register with another secret", func() error {
			n := testNode("n1", 1000, 1000)
			n.SecretID = "secret-n2"
			_, err := s.NodeRegister(ctx, &structs.NodeRegisterRequest{Node: n})
			return err
		}, structs.KindPermission},
		{"re-register with its secret", func() error {
			_, err := s.NodeRegister(ctx, &structs.NodeRegisterRequest{Node: testNode("n1", 1000, 1000)})
			return err
		}, structs.KindInternal},
		{"heartbeat with another node's secret", func() error {
			_, err := s.NodeUpdateStatus(ctx, &structs.NodeUpdateStatusRequest{NodeID: "n1", SecretID: "secret-n2"})
			return err
		}, structs.KindPermission},
		{"heartbeat of an unknown node", func() error {
			_, err := s.NodeUpdateStatus(ctx, &structs.NodeUpdateStatusRequest{NodeID: "n9", SecretID: "secret-n9"})
			return err
		}, structs.KindNotFound},
		{"heartbeat with its secret", func() error {
			_, err := s.NodeUpdateStatus(ctx, &structs.NodeUpdateStatusRequest{NodeID: "n1", SecretID: "secret-n1"})
			return err
		}, structs.KindInternal},
		{"alloc watch without secret", func() error {
			_, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "n1"})
			return err
		}, structs.KindPermission},
		{"alloc update without secret", func() error {
			_, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "n1"})
			return err
		}, structs.KindPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if tt.want == structs.KindInternal {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				return
			}
			if structs.KindOf(err) != tt.want {
				t.Fatalf("err = %v (kind %s), want kind %s", err, structs.KindOf(err), tt.want)
			}
		})
	}
	got, err := s.NodeGet(ctx, &structs.NodeSpecificRequest{NodeID: "n1"})
	if err != nil || got.Node.SecretID != "" {
		t.Fatalf("NodeGet = %+v, %v; want no secret", got.Node, err)
	}
	if stored, _ := s.State().NodeByID(nil, "n1"); stored.SecretID != "secret-n1" {
		t.Fatalf("stored node lost its secret: %q", stored.SecretID)
	}
}
