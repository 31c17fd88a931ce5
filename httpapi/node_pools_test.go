package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
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
