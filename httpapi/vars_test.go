package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// fakeVars is the server's variable methods over one map, with CAS.
type fakeVars struct {
	mu    sync.Mutex // guards the fields below
	vars  map[string]*structs.VariableDecrypted
	index uint64
	last  *structs.VariablesApplyRequest
}

func (f *fakeVars) VarApply(_ context.Context, r *structs.VariablesApplyRequest) (*structs.VariablesApplyResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = r
	cur := f.vars[r.Var.Path]
	resp := &structs.VariablesApplyResponse{Op: r.Op}
	if r.Op == structs.VarOpCAS || r.Op == structs.VarOpDeleteCAS {
		if (cur == nil && r.CheckIndex != 0) || (cur != nil && cur.ModifyIndex != r.CheckIndex) {
			resp.Conflicted = true
			resp.Conflict = &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: r.Var.Path}}
			if cur != nil {
				resp.Conflict = cur
			}
			return resp, nil
		}
	}
	f.index++
	resp.Index = f.index
	if r.Op == structs.VarOpDelete || r.Op == structs.VarOpDeleteCAS {
		delete(f.vars, r.Var.Path)
		return resp, nil
	}
	v := r.Var.Copy()
	v.Namespace, v.ModifyIndex, v.CreateIndex = "default", f.index, f.index
	f.vars[v.Path] = v
	resp.Output = v
	return resp, nil
}

func (f *fakeVars) VarGet(_ context.Context, r *structs.VariablesReadRequest) (*structs.VariablesReadResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &structs.VariablesReadResponse{Data: f.vars[r.Path], QueryMeta: structs.QueryMeta{Index: f.index}}, nil
}

func newVarsAPI(t *testing.T) (*httptest.Server, *fakeVars) {
	t.Helper()
	f := &fakeVars{vars: map[string]*structs.VariableDecrypted{}}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.VarApply, f.VarApply)
	rpcapi.Handle(h, rpcapi.VarGet, f.VarGet)
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts, f
}

func TestVariableEndpoints(t *testing.T) {
	ts, f := newVarsAPI(t)
	do := func(method, path, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"create", "PUT", "/v1/var/app/db?cas=0", `{"Items":{"k":"v"}}`, 200, `"ModifyIndex":1`},
		{"create again", "PUT", "/v1/var/app/db?cas=0", `{"Items":{"k":"x"}}`, 409, `"Items":{"k":"v"}`},
		{"read", "GET", "/v1/var/app/db", "", 200, `"Path":"app/db"`},
		{"missing", "GET", "/v1/var/app/none", "", 404, "variable not found"},
		{"dot-dot", "PUT", "/v1/var/app/../db", `{"Items":{"k":"v"}}`, 400, `contains ".."`},
		{"escaped dot-dot", "PUT", "/v1/var/app/%2E%2E/db", `{"Items":{"k":"v"}}`, 400, `contains ".."`},
		{"body path differs", "PUT", "/v1/var/app/db", `{"Path":"other","Items":{"k":"v"}}`, 400, "does not match"},
		{"bad cas", "PUT", "/v1/var/app/db?cas=x", `{"Items":{"k":"v"}}`, 400, "cas"},
		{"unknown field", "PUT", "/v1/var/app/db", `{"Itemz":{"k":"v"}}`, 400, "Itemz"},
		{"lock and cas", "PUT", "/v1/var/app/db?cas=1&lock-acquire", `{}`, 400, "cannot be combined"},
		{"delete stale", "DELETE", "/v1/var/app/db?cas=7", "", 409, `"ModifyIndex":1`},
		{"delete", "DELETE", "/v1/var/app/db?cas=1", "", 204, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(tc.method, tc.path, tc.body)
			if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%s %s = %d %q, want %d with %q", tc.method, tc.path, resp.StatusCode, body, tc.code, tc.want)
			}
			if tc.code == 409 {
				var v api.Variable
				if err := json.Unmarshal([]byte(body), &v); err != nil || v.Path != "app/db" {
					t.Fatalf("conflict body %q: %v", body, err)
				}
			}
			if tc.code == 204 && body != "" {
				t.Fatalf("204 with a body %q", body)
			}
		})
	}
	// The namespace comes from the query, else the body.
	do("PUT", "/v1/var/ns/a?namespace=prod", `{"Namespace":"dev","Items":{"k":"v"}}`)
	if f.last.Var.Namespace != "prod" {
		t.Errorf("namespace = %q, want the query's", f.last.Var.Namespace)
	}
	do("PUT", "/v1/var/ns/a", `{"Namespace":"dev","Items":{"k":"v"}}`)
	if f.last.Var.Namespace != "dev" {
		t.Errorf("namespace = %q, want the body's", f.last.Var.Namespace)
	}
	do("PUT", "/v1/var/ns/a?lock-acquire", `{"Lock":{"TTL":"20s"}}`)
	if f.last.Op != structs.VarOpLockAcquire || f.last.Var.Lock == nil || f.last.Var.Lock.TTL != "20s" {
		t.Errorf("lock-acquire sent %+v", f.last)
	}
}
