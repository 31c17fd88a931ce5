package httpapi

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// taskToken is what the fake servers accept as the workload identity of
// task t of group g of job web.
const taskToken = "eyJhbGciOiJFZERTQSJ9.eyJ0YXNrIjoidCJ9.c2ln"

// fakeIdentity is the servers' IdentityAuthorize: it knows one token and
// allows variable reads and lists and service reads, in its namespace.
type fakeIdentity struct{ ops []structs.WorkloadOp }

func (f *fakeIdentity) IdentityAuthorize(_ context.Context, r *structs.IdentityAuthorizeRequest) (*structs.IdentityAuthorizeResponse, error) {
	f.ops = append(f.ops, r.Op)
	if r.Token != taskToken {
		return nil, structs.NewError(structs.KindPermission, "Permission denied: the workload identity's signature does not verify")
	}
	if r.Op.Kind == structs.WorkloadOpOther || (r.Op.Namespace != "" && r.Op.Namespace != "default") {
		return nil, structs.NewError(structs.KindPermission, "Permission denied: may not do %s", r.Op)
	}
	return &structs.IdentityAuthorizeResponse{Claims: &structs.IdentityClaims{Namespace: "default", JobID: "web", Group: "g", Task: "t"}}, nil
}

func TestWorkloadIdentityRequests(t *testing.T) {
	vars := &fakeVars{vars: map[string]*structs.VariableDecrypted{}}
	for _, p := range []string{"nomad/jobs/web", "nomad/jobs/db"} {
		vars.vars[p] = &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: p}, Items: map[string]string{"k": p}}
	}
	ids := &fakeIdentity{}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.VarGet, vars.VarGet)
	rpcapi.Handle(h, rpcapi.VarApply, vars.VarApply)
	rpcapi.Handle(h, rpcapi.VarList, func(_ context.Context, r *structs.VariablesListRequest) (*structs.VariablesListResponse, error) {
		out := &structs.VariablesListResponse{}
		for _, v := range vars.vars {
			out.Data = append(out.Data, &v.VariableMetadata)
		}
		return out, nil
	})
	rpcapi.Handle(h, rpcapi.IdentityAuthorize, ids.IdentityAuthorize)
	rpcapi.Handle(h, rpcapi.ServiceRegistrationList, func(_ context.Context, r *structs.ServiceRegistrationListRequest) (*structs.ServiceRegistrationListResponse, error) {
		return &structs.ServiceRegistrationListResponse{}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)

	tests := []struct {
		name, method, path, header, token string
		code                              int
		want                              string
	}{
		{"own variable, bearer", "GET", "/v1/var/nomad/jobs/web", "Authorization", "Bearer " + taskToken, 200, `"k":"nomad/jobs/web"`},
		{"own variable, x-nomad-token", "GET", "/v1/var/nomad/jobs/web", "X-Nomad-Token", taskToken, 200, `"k":"nomad/jobs/web"`},
		{"another job's variable", "GET", "/v1/var/nomad/jobs/db", "X-Nomad-Token", taskToken, 403, "Permission denied"},
		{"list is filtered", "GET", "/v1/vars", "X-Nomad-Token", taskToken, 200, `"Path":"nomad/jobs/web"`},
		{"other namespace", "GET", "/v1/var/nomad/jobs/web?namespace=prod", "X-Nomad-Token", taskToken, 403, "Permission denied"},
		{"variable write", "PUT", "/v1/var/nomad/jobs/web", "X-Nomad-Token", taskToken, 403, "Permission denied"},
		{"job list", "GET", "/v1/jobs", "X-Nomad-Token", taskToken, 403, "Permission denied"},
		{"forged token", "GET", "/v1/var/nomad/jobs/web", "X-Nomad-Token", "eyJhbGciOiJub25lIn0.e30.", 403, "signature"},
		{"services", "GET", "/v1/services", "X-Nomad-Token", taskToken, 200, "[]"},
		{"no token: the router", "GET", "/v1/var/nomad/jobs/db", "", "", 200, `"k":"nomad/jobs/db"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(`{"Items":{"k":"v"}}`))
			if err != nil {
				t.Fatal(err)
			}
			if tc.header != "" {
				req.Header.Set(tc.header, tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%s %s = %d %q, want %d with %q", tc.method, tc.path, resp.StatusCode, b, tc.code, tc.want)
			}
			if tc.name == "list is filtered" && strings.Contains(string(b), "nomad/jobs/db") {
				t.Fatalf("the list shows another job's variable: %s", b)
			}
		})
	}
	if vars.last != nil {
		t.Errorf("a workload identity wrote a variable: %+v", vars.last)
	}
}

func TestJWKS(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.KeyringPublicKeys, func(context.Context, *structs.KeyringPublicKeysRequest) (*structs.KeyringPublicKeysResponse, error) {
		return &structs.KeyringPublicKeysResponse{PublicKeys: []*structs.KeyringPublicKey{{KeyID: "k1", PublicKey: pub}}, QueryMeta: structs.QueryMeta{Index: 4}}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	hs.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/.well-known/jwks.json", nil))
	if rec.Code != 200 {
		t.Fatalf("GET jwks = %d %s", rec.Code, rec.Body)
	}
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("jwks %s: %v", rec.Body, err)
	}
	k := set.Keys[0]
	x, err := base64.RawURLEncoding.DecodeString(k["x"])
	if k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["alg"] != "EdDSA" || k["kid"] != "k1" || k["use"] != "sig" || err != nil || !pub.Equal(ed25519.PublicKey(x)) {
		t.Fatalf("jwk %v", k)
	}
}

// TestWorkloadServiceReadAsNode: on a client-only agent, a task's service
// read that the servers authorized is forwarded with the node's secret (the
// servers refused it as anonymous with ACLs enabled), and in the task's
// namespace only; an agent without a node token forwards none.
func TestWorkloadServiceReadAsNode(t *testing.T) {
	for _, tc := range []struct {
		name      string
		nodeToken func() string
		want      string
	}{
		{"client-only agent", func() string { return "node-secret" }, "node-secret"},
		{"server agent", nil, ""},
		{"node not set up yet", func() string { return "" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := rpcapi.NewHandlers()
			rpcapi.Handle(h, rpcapi.IdentityAuthorize, (&fakeIdentity{}).IdentityAuthorize)
			type seen struct{ token, namespace string }
			got := make(chan seen, 1)
			rpcapi.Handle(h, rpcapi.ServiceRegistrationGet, func(ctx context.Context, r *structs.ServiceRegistrationByNameRequest) (*structs.ServiceRegistrationByNameResponse, error) {
				got <- seen{rpcapi.AuthToken(ctx), r.Namespace}
				return &structs.ServiceRegistrationByNameResponse{}, nil
			})
			hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler), NodeToken: tc.nodeToken})
			ts := httptest.NewServer(hs.Handler())
			t.Cleanup(ts.Close)
			req, err := http.NewRequest("GET", ts.URL+"/v1/service/web", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Nomad-Token", taskToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("GET /v1/service/web = %d %s", resp.StatusCode, b)
			}
			s := <-got
			if s.token != tc.want {
				t.Errorf("forwarded token = %q, want %q", s.token, tc.want)
			}
			if s.token == taskToken {
				t.Error("the task's own token was forwarded")
			}
			if s.namespace != "default" {
				t.Errorf("namespace = %q, want the task's (default)", s.namespace)
			}
		})
	}
}
