package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TestNodePoolPathKeepsEscapes: a pool name holding an escaped "/" stays
// one name through the /v1/node/pool/ rewrite, so that it reaches the
// handler (and its "not found") instead of matching no route.
func TestNodePoolPathKeepsEscapes(t *testing.T) {
	tests := []struct{ url, wantName, wantRoute string }{
		{"/v1/node/pool/prod", "prod", "GET /v1/node-pool/{name}"},
		{"/v1/node/pool/node%2Fpool", "node/pool", "GET /v1/node-pool/{name}"},
		{"/v1/node/pool/a%2Fb/nodes", "a/b", "GET /v1/node-pool/{name}/nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			mux := http.NewServeMux()
			var gotName, gotRoute string
			for _, p := range []string{"GET /v1/node-pool/{name}", "GET /v1/node-pool/{name}/nodes"} {
				mux.HandleFunc(p, func(_ http.ResponseWriter, r *http.Request) { gotName, gotRoute = r.PathValue("name"), r.Pattern })
			}
			req := nodePoolPath(httptest.NewRequest(http.MethodGet, tt.url, nil))
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || gotName != tt.wantName || gotRoute != tt.wantRoute {
				t.Fatalf("code %d, route %q, name %q; want route %q, name %q", rec.Code, gotRoute, gotName, tt.wantRoute, tt.wantName)
			}
		})
	}
}

// TestNodePoolIdentityTTLRoundTrip: a pool written with Nomad's
// NodeIdentityTTL (a duration string) is stored with it and read back
// with it, as Nomad's TestNodePools_Register does.
func TestNodePoolIdentityTTLRoundTrip(t *testing.T) {
	var (
		mu     sync.Mutex // guards stored
		stored = map[string]*structs.NodePool{}
	)
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NodePoolUpsert, func(_ context.Context, r *structs.NodePoolUpsertRequest) (*structs.NodePoolWriteResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range r.NodePools {
			if err := p.Validate(); err != nil {
				return nil, err
			}
			stored[p.Name] = p.Copy()
		}
		return &structs.NodePoolWriteResponse{WriteMeta: structs.WriteMeta{Index: 7}}, nil
	})
	rpcapi.Handle(h, rpcapi.NodePoolGet, func(_ context.Context, r *structs.NodePoolSpecificRequest) (*structs.SingleNodePoolResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		return &structs.SingleNodePoolResponse{NodePool: stored[r.Name], QueryMeta: structs.QueryMeta{Index: 7}}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)

	c, err := api.NewClient(&api.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NodePools().Register(&api.NodePool{Name: "dev-1", NodeIdentityTTL: 720 * time.Hour}, nil); err != nil {
		t.Fatalf("register with a TTL: %v", err)
	}
	if p := stored["dev-1"]; p == nil || p.NodeIdentityTTL != 720*time.Hour {
		t.Fatalf("stored %+v, want the 720h TTL", p)
	}
	got, _, err := c.NodePools().Info("dev-1", nil)
	if err != nil || got.NodeIdentityTTL != 720*time.Hour {
		t.Fatalf("read back %+v, %v: want the 720h TTL", got, err)
	}
	resp, err := http.Post(ts.URL+"/v1/node/pools", "application/json", strings.NewReader(`{"Name":"bad","NodeIdentityTTL":"-1h"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "negative") {
		t.Errorf("negative TTL: %d %s, want 400 saying it is negative", resp.StatusCode, b)
	}
}
