package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// fakeResolver resolves fixed secrets; "expired" is an expired token.
type fakeResolver struct {
	acls map[string]*acl.ACL
}

func (f fakeResolver) ResolveACL(_ context.Context, secret string) (*acl.ACL, *structs.ACLToken, error) {
	switch secret {
	case "":
		return f.acls[""], nil, nil
	case "expired":
		return nil, nil, structs.NewError(structs.KindPermission, "ACL token expired")
	}
	a, ok := f.acls[secret]
	if !ok {
		return nil, nil, structs.NewError(structs.KindPermission, "ACL token not found")
	}
	return a, &structs.ACLToken{SecretID: secret, Type: structs.ACLClientToken}, nil
}

func mustPolicy(t *testing.T, rules string) *acl.Policy {
	t.Helper()
	p, err := acl.Parse("test", rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newACLServer(t *testing.T, b *fakeBackend, r ACLResolver) (*httptest.Server, *Server) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hs := New(nil, &Config{RPC: b.handlers(), Agent: fakeInfo{}, ParseJob: fakeParse, Logger: logger, ACL: r})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts, hs
}

func TestACLEnforcement(t *testing.T) {
	b := &fakeBackend{jobs: []*structs.Job{{ID: "web", Namespace: "default"}, {ID: "db", Namespace: "prod"}}}
	res := fakeResolver{acls: map[string]*acl.ACL{
		"":     acl.New(mustPolicy(t, `agent = "read"`)), // the anonymous policy
		"ro":   acl.New(mustPolicy(t, `namespace "default" { policy = "read" }`)),
		"mgmt": acl.ManagementACL(),
		"node": acl.New(mustPolicy(t, `node { policy = "read" }`)),
	}}
	ts, _ := newACLServer(t, b, res)
	cases := []struct {
		name, method, path, token, body string
		bearer                          bool
		wantCode                        int
		wantBody                        string
	}{
		{"anonymous list denied", "GET", "/v1/jobs", "", "", false, 403, "Permission denied"},
		{"anonymous write denied", "PUT", "/v1/jobs", "", validJobBody, false, 403, "Permission denied"},
		{"anonymous public route", "GET", "/v1/status/leader", "", "", false, 200, ""},
		{"read-only reads", "GET", "/v1/jobs", "ro", "", false, 200, "web"},
		{"read-only by bearer", "GET", "/v1/job/web", "ro", "", true, 200, "web"},
		{"read-only cannot write", "PUT", "/v1/jobs", "ro", validJobBody, false, 403, "Permission denied"},
		{"read-only other namespace", "GET", "/v1/jobs?namespace=prod", "ro", "", false, 403, "Permission denied"},
		{"read-only no nodes", "GET", "/v1/nodes", "ro", "", false, 403, "Permission denied"},
		{"node token reads nodes", "GET", "/v1/nodes", "node", "", false, 200, ""},
		{"management writes", "PUT", "/v1/jobs", "mgmt", validJobBody, false, 200, "eval-1"},
		{"management reads every namespace", "GET", "/v1/jobs?namespace=*", "mgmt", "", false, 200, "db"},
		{"expired token refused", "GET", "/v1/jobs", "expired", "", false, 403, "ACL token expired"},
		{"unknown token refused", "GET", "/v1/jobs", "bogus", "", false, 403, "ACL token not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				if tc.bearer {
					req.Header.Set("Authorization", "Bearer "+tc.token)
				} else {
					req.Header.Set("X-Nomad-Token", tc.token)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tc.wantCode)
			}
			if !strings.Contains(string(body), tc.wantBody) {
				t.Fatalf("body %q does not contain %q", body, tc.wantBody)
			}
			if tc.wantCode == 403 && string(body) != tc.wantBody {
				t.Fatalf("body %q, want exactly %q", body, tc.wantBody)
			}
		})
	}
}

// TestACLListFiltered checks that a list across namespaces holds only the
// namespaces the token may read.
func TestACLListFiltered(t *testing.T) {
	b := &fakeBackend{jobs: []*structs.Job{{ID: "web", Namespace: "default"}, {ID: "db", Namespace: "prod"}}}
	res := fakeResolver{acls: map[string]*acl.ACL{"ro": acl.New(mustPolicy(t, `namespace "default" { policy = "read" }`))}}
	ts, _ := newACLServer(t, b, res)
	req, _ := http.NewRequest("GET", ts.URL+"/v1/jobs?namespace=*", nil)
	req.Header.Set("X-Nomad-Token", "ro")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []struct{ ID, Namespace string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].ID != "web" {
		t.Fatalf("jobs %+v, want only web (default)", out)
	}
}

// TestACLDisabledServesAll checks that without a resolver nothing
// changes: anonymous requests are served.
func TestACLDisabledServesAll(t *testing.T) {
	b := &fakeBackend{jobs: []*structs.Job{{ID: "web", Namespace: "default"}}}
	ts := newFakeServer(t, b)
	resp, err := http.Get(ts.URL + "/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d without ACLs", resp.StatusCode)
	}
}

// TestACLTokenForwarded checks that the request's token reaches the
// server's methods (a client-only agent sends it over RPC).
func TestACLTokenForwarded(t *testing.T) {
	var got string
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.JobList, func(ctx context.Context, _ *structs.JobListRequest) (*structs.JobListResponse, error) {
		got = rpcapi.AuthToken(ctx)
		return &structs.JobListResponse{}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ACL: fakeResolver{acls: map[string]*acl.ACL{"mgmt": acl.ManagementACL()}}})
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+"/v1/jobs", nil)
	req.Header.Set("X-Nomad-Token", "mgmt")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "mgmt" {
		t.Fatalf("token at the server %q, want mgmt", got)
	}
}

func TestLookupLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLookupLimiter(func() time.Time { return now })
	for range failedLookupBurst {
		if l.limited("10.0.0.1") {
			t.Fatal("limited before the burst")
		}
		l.fail("10.0.0.1")
	}
	if !l.limited("10.0.0.1") {
		t.Fatal("not limited after the burst")
	}
	if l.limited("10.0.0.2") {
		t.Fatal("another address is limited")
	}
	now = now.Add(failedLookupWindow)
	if l.limited("10.0.0.1") {
		t.Fatal("still limited after the window")
	}
}

// TestACLFailedLookupsRateLimited checks the 429 after too many unknown
// tokens from one address.
func TestACLFailedLookupsRateLimited(t *testing.T) {
	ts, _ := newACLServer(t, &fakeBackend{}, fakeResolver{acls: map[string]*acl.ACL{}})
	var last int
	for range failedLookupBurst + 1 {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/jobs", nil)
		req.Header.Set("X-Nomad-Token", "guess")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		last = resp.StatusCode
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("status %d after %d failed lookups, want 429", last, failedLookupBurst+1)
	}
}

// TestACLNamespacesFiltered checks that /v1/namespaces lists only the
// namespaces the caller (anonymous here) may use.
func TestACLNamespacesFiltered(t *testing.T) {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NamespaceList, func(context.Context, *structs.NamespaceListRequest) (*structs.NamespaceListResponse, error) {
		return &structs.NamespaceListResponse{Namespaces: []*structs.Namespace{{Name: "default"}, {Name: "prod"}}}, nil
	})
	res := fakeResolver{acls: map[string]*acl.ACL{"": acl.New(mustPolicy(t, `namespace "default" { policy = "read" }`))}}
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ACL: res})
	ts := httptest.NewServer(hs.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []struct{ Name string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Name != "default" {
		t.Fatalf("namespaces %+v, want only default", out)
	}
}

// TestLoginAndExchangeGuessesRateLimited: refused logins and one-time token
// exchanges count against the caller's address as failed token lookups do
// (they were not limited, so their secrets could be guessed at full
// speed), and a limited address gets 429 without reaching the servers.
func TestLoginAndExchangeGuessesRateLimited(t *testing.T) {
	for _, tc := range []struct{ name, path, body string }{
		{"login", "/v1/acl/login", `{"AuthMethodName":"jwt","LoginToken":"guess"}`},
		{"one-time exchange", "/v1/acl/token/onetime/exchange", `{"OneTimeSecretID":"guess"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := rpcapi.NewHandlers()
			calls := 0
			refuse := func() (*structs.ACLTokenResponse, error) {
				calls++
				return nil, structs.NewError(structs.KindPermission, "Permission denied: not found")
			}
			rpcapi.Handle(h, rpcapi.ACLLogin, func(context.Context, *structs.ACLLoginRequest) (*structs.ACLTokenResponse, error) { return refuse() })
			rpcapi.Handle(h, rpcapi.OneTimeTokenExchange, func(context.Context, *structs.OneTimeTokenExchangeRequest) (*structs.ACLTokenResponse, error) {
				return refuse()
			})
			hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler),
				ACL: fakeResolver{acls: map[string]*acl.ACL{"": acl.New()}}})
			ts := httptest.NewServer(hs.Handler())
			t.Cleanup(ts.Close)
			var last int
			for range failedLookupBurst + 1 {
				resp, err := http.Post(ts.URL+tc.path, "application/json", strings.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				last = resp.StatusCode
			}
			if last != http.StatusTooManyRequests {
				t.Fatalf("status %d after %d refused attempts, want 429", last, failedLookupBurst+1)
			}
			if calls != failedLookupBurst {
				t.Errorf("the servers were asked %d times, want %d (none once limited)", calls, failedLookupBurst)
			}
		})
	}
}
