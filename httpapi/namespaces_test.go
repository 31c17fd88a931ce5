package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// fakeNamespaces is the server's namespace methods over one map.
type fakeNamespaces struct {
	mu    sync.Mutex // guards the fields below
	ns    map[string]*structs.Namespace
	index uint64
}

func (f *fakeNamespaces) list(_ context.Context, r *structs.NamespaceListRequest) (*structs.NamespaceListResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &structs.NamespaceListResponse{QueryMeta: structs.QueryMeta{Index: f.index}}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range f.ns {
			if !yield(k) {
				return
			}
		}
	}) {
		if strings.HasPrefix(name, r.Prefix) {
			resp.Namespaces = append(resp.Namespaces, f.ns[name])
		}
	}
	return resp, nil
}

func (f *fakeNamespaces) get(_ context.Context, r *structs.NamespaceSpecificRequest) (*structs.SingleNamespaceResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ns := f.ns[r.Name]
	if ns == nil {
		return nil, structs.NotFound("namespace", r.Name)
	}
	return &structs.SingleNamespaceResponse{Namespace: ns, QueryMeta: structs.QueryMeta{Index: ns.ModifyIndex}}, nil
}

func (f *fakeNamespaces) upsert(_ context.Context, r *structs.NamespaceUpsertRequest) (*structs.NamespaceWriteResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	for _, ns := range r.Namespaces {
		if err := ns.Validate(); err != nil {
			return nil, err
		}
		c := ns.Copy()
		c.CreateIndex, c.ModifyIndex = f.index, f.index
		f.ns[c.Name] = c
	}
	return &structs.NamespaceWriteResponse{WriteMeta: structs.WriteMeta{Index: f.index}}, nil
}

func (f *fakeNamespaces) delete(_ context.Context, r *structs.NamespaceDeleteRequest) (*structs.NamespaceWriteResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range r.Names {
		if name == "default" {
			return nil, structs.Invalid("the default namespace cannot be deleted")
		}
		if f.ns[name] == nil {
			return nil, structs.NotFound("namespace", name)
		}
		delete(f.ns, name)
	}
	f.index++
	return &structs.NamespaceWriteResponse{WriteMeta: structs.WriteMeta{Index: f.index}}, nil
}

func newNamespacesAPI(t *testing.T) *httptest.Server {
	t.Helper()
	f := &fakeNamespaces{ns: map[string]*structs.Namespace{"default": structs.DefaultNamespaceObject()}, index: 1}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NamespaceList, f.list)
	rpcapi.Handle(h, rpcapi.NamespaceGet, f.get)
	rpcapi.Handle(h, rpcapi.NamespaceUpsert, f.upsert)
	rpcapi.Handle(h, rpcapi.NamespaceDelete, f.delete)
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func TestNamespaceEndpoints(t *testing.T) {
	ts := newNamespacesAPI(t)
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
	// Nomad's client sends every field of its Namespace, nulls included.
	const nomadBody = `{"Name":"dev","Description":"developers","Quota":"","Capabilities":null,"NodePoolConfiguration":null,` +
		`"VaultConfiguration":null,"ConsulConfiguration":null,"Meta":{"team":"a"},"CreateIndex":0,"ModifyIndex":0,` +
		`"RequiredExtraClaims":null,"OptionalExtraClaims":null}`
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"list", "GET", "/v1/namespaces", "", 200, `"Name":"default","Description":"Default shared namespace"`},
		{"register as Nomad's client", "PUT", "/v1/namespace", nomadBody, 200, ""},
		{"info", "GET", "/v1/namespace/dev", "", 200, `"Meta":{"team":"a"}`},
		{"missing", "GET", "/v1/namespace/nope", "", 404, "not found"},
		{"register by path", "POST", "/v1/namespace/ops", `{"Description":"ops","Capabilities":{"DisabledTaskDrivers":["raw_exec"]}}`, 200, ""},
		{"capabilities", "GET", "/v1/namespace/ops", "", 200, `"DisabledTaskDrivers":["raw_exec"]`},
		{"prefix", "GET", "/v1/namespaces?prefix=o", "", 200, `[{"Name":"ops"`},
		{"path differs", "PUT", "/v1/namespace/a", `{"Name":"b"}`, 400, `differs from the path's "a"`},
		{"invalid name", "PUT", "/v1/namespace", `{"Name":"*"}`, 400, `invalid name "*".`},
		{"vault", "PUT", "/v1/namespace", `{"Name":"v","VaultConfiguration":{"Default":"x"}}`, 400, "vault (VaultConfiguration)"},
		{"claims", "PUT", "/v1/namespace", `{"Name":"v","RequiredExtraClaims":{"a":"b"}}`, 400, "ExtraClaims"},
		{"unknown field", "PUT", "/v1/namespace", `{"Name":"v","Descripton":"x"}`, 400, "Descripton"},
		{"delete default", "DELETE", "/v1/namespace/default", "", 400, "cannot be deleted"},
		{"delete", "DELETE", "/v1/namespace/dev", "", 200, ""},
		{"deleted", "GET", "/v1/namespace/dev", "", 404, "not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(tc.method, tc.path, tc.body)
			if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%s %s = %d %q, want %d with %q", tc.method, tc.path, resp.StatusCode, body, tc.code, tc.want)
			}
			if tc.code == 200 && resp.Header.Get("X-Nomad-Index") == "" {
				t.Fatal("no X-Nomad-Index")
			}
		})
	}
}

// TestNamespacesClient drives the endpoints with drover's api client.
func TestNamespacesClient(t *testing.T) {
	ts := newNamespacesAPI(t)
	c, err := api.NewClient(&api.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	nss := c.Namespaces()
	wm, err := nss.Register(&api.Namespace{Name: "dev", Description: "d", Capabilities: &api.NamespaceCapabilities{EnabledTaskDrivers: []string{"docker"}}}, nil)
	if err != nil || wm.LastIndex == 0 {
		t.Fatalf("register: %+v, %v", wm, err)
	}
	list, _, err := nss.List(nil)
	if err != nil || len(list) != 2 || list[1].Name != "dev" || list[1].Capabilities.EnabledTaskDrivers[0] != "docker" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if _, _, err := nss.Info("nope", nil); !api.IsNotFound(err) {
		t.Fatalf("info of an unknown namespace: %v", err)
	}
	if _, err := nss.Delete("dev", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := nss.Info("dev", nil); !api.IsNotFound(err) {
		t.Fatalf("info of a deleted namespace: %v", err)
	}
}
