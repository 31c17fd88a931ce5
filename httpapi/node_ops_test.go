package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// nodeOpsBackend knows one node, "n1-full-id", and records the node
// operations it is asked for.
type nodeOpsBackend struct{ calls []string }

func (b *nodeOpsBackend) handlers() *rpcapi.Handlers {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NodeGet, func(_ context.Context, r *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
		if !strings.HasPrefix("n1-full-id", r.NodeID) {
			return &structs.SingleNodeResponse{}, nil
		}
		return &structs.SingleNodeResponse{Node: &structs.Node{ID: "n1-full-id"}}, nil
	})
	rpcapi.Handle(h, rpcapi.NodeEvaluate, func(_ context.Context, r *structs.NodeEvaluateRequest) (*structs.NodeDrainUpdateResponse, error) {
		b.calls = append(b.calls, "evaluate "+r.NodeID)
		return &structs.NodeDrainUpdateResponse{EvalIDs: []string{"e1"}, EvalCreateIndex: 9, NodeModifyIndex: 4, WriteMeta: structs.WriteMeta{Index: 9}}, nil
	})
	rpcapi.Handle(h, rpcapi.NodePurge, func(_ context.Context, r *structs.NodePurgeRequest) (*structs.NodeDrainUpdateResponse, error) {
		b.calls = append(b.calls, "purge "+r.NodeID)
		return &structs.NodeDrainUpdateResponse{EvalIDs: []string{}, NodeModifyIndex: 11, WriteMeta: structs.WriteMeta{Index: 11}}, nil
	})
	return h
}

func TestNodeEvaluateAndPurgeRoutes(t *testing.T) {
	tests := []struct {
		method, path string
		wantCode     int
		wantBody     string
		wantIndex    string
		wantCall     string
	}{
		{"PUT", "/v1/node/n1-full-id/evaluate", 200, `{"NodeModifyIndex":4,"EvalIDs":["e1"],"EvalCreateIndex":9,"Index":9}`, "9", "evaluate n1-full-id"},
		{"POST", "/v1/node/n1/evaluate", 200, `"EvalIDs":["e1"]`, "9", "evaluate n1-full-id"},
		{"PUT", "/v1/node/n1-full-id/purge", 200, `{"NodeModifyIndex":11,"EvalIDs":[],"EvalCreateIndex":0,"Index":11}`, "11", "purge n1-full-id"},
		{"PUT", "/v1/node/12345678-abcd/purge", 404, `node "12345678-abcd" not found`, "", ""},
		{"PUT", "/v1/node/12345678-abcd/evaluate", 404, `not found`, "", ""},
		{"GET", "/v1/node/n1/purge", 405, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			b := &nodeOpsBackend{}
			hs := New(nil, &Config{RPC: b.handlers(), Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			rec := httptest.NewRecorder()
			hs.Handler().ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, http.NoBody))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.wantCode || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("%s %s = %d %s; want %d with %q", tt.method, tt.path, rec.Code, body, tt.wantCode, tt.wantBody)
			}
			if got := rec.Header().Get("X-Nomad-Index"); tt.wantIndex != "" && got != tt.wantIndex {
				t.Errorf("X-Nomad-Index = %q, want %q", got, tt.wantIndex)
			}
			if got := strings.Join(b.calls, ","); got != tt.wantCall {
				t.Errorf("server calls %q, want %q", got, tt.wantCall)
			}
		})
	}
}
