package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/drover-io/drover/httpapi"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// BenchmarkJobReadACL reads one job through the HTTP API of an in-process
// server (GET /v1/job/:id, no network), with ACLs off and on (a client
// token with a read policy, its resolution cached as in steady state).
// docs/performance.md records the numbers.
func BenchmarkJobReadACL(b *testing.B) {
	for _, tc := range []struct {
		name string
		acl  bool
	}{{"acl=off", false}, {"acl=on", true}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			srv, err := server.NewServer(ctx, &server.Config{NodeName: "bench.global", ACLEnabled: tc.acl, NumWorkers: -1})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = srv.Shutdown() })
			job := &structs.Job{ID: "web", Name: "web", Namespace: "default", Type: structs.JobTypeService, Priority: 50,
				Datacenters: []string{"dc1"},
				TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec",
					Config: map[string]any{"command": "/bin/true"}, Resources: &structs.Resources{CPU: 10, MemoryMB: 10}}}}}}
			if _, err := rpcapi.JobRegister.Call(ctx, srv, &structs.JobRegisterRequest{Job: job}); err != nil {
				b.Fatal(err)
			}
			var resolver httpapi.ACLResolver
			token := ""
			if tc.acl {
				resolver = srv
				if _, err := srv.ACLBootstrap(ctx, &structs.ACLBootstrapRequest{}); err != nil {
					b.Fatal(err)
				}
				if _, err := srv.ACLPolicyUpsert(ctx, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
					{Name: "ro", Rules: `namespace "default" { policy = "read" }`}}}); err != nil {
					b.Fatal(err)
				}
				tok, err := srv.ACLTokenUpsert(ctx, &structs.ACLTokenUpsertRequest{Token: &structs.ACLToken{Type: "client", Policies: []string{"ro"}}})
				if err != nil {
					b.Fatal(err)
				}
				token = tok.Token.SecretID
			}
			h := httpapi.New(nil, &httpapi.Config{RPC: srv, Agent: agentInfo{&Agent{cfg: DefaultConfig()}}, ACL: resolver}).Handler()
			req := httptest.NewRequest(http.MethodGet, "/v1/job/web", nil)
			if token != "" {
				req.Header.Set("X-Nomad-Token", token)
			}
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
