package server

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

func newACLServer(t *testing.T, mutate func(*Config)) *Server {
	t.Helper()
	return newTestServer(t, func(c *Config) {
		c.ACLEnabled = true
		if mutate != nil {
			mutate(c)
		}
	})
}

func bootstrap(t *testing.T, s *Server) *structs.ACLToken {
	t.Helper()
	resp, err := s.ACLBootstrap(context.Background(), &structs.ACLBootstrapRequest{})
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	return resp.Token
}

func TestACLBootstrapOnceAndReset(t *testing.T) {
	reset := filepath.Join(t.TempDir(), "acl-bootstrap-reset")
	s := newACLServer(t, func(c *Config) { c.ACLBootstrapResetFile = reset })
	ctx := context.Background()
	tok := bootstrap(t, s)
	if !tok.IsManagement() || tok.SecretID == "" || tok.AccessorID == "" {
		t.Fatalf("bootstrap token %+v", tok)
	}
	_, err := s.ACLBootstrap(ctx, &structs.ACLBootstrapRequest{})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "ACL bootstrap already done (reset index: ") {
		t.Fatalf("second bootstrap: %v, want already done", err)
	}
	st, _ := s.fsm.State().ACLState(nil)
	if err := os.WriteFile(reset, []byte(strconv.FormatUint(st.BootstrapIndex+1, 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ACLBootstrap(ctx, &structs.ACLBootstrapRequest{}); err == nil {
		t.Fatal("bootstrap with a wrong reset index succeeded")
	}
	if err := os.WriteFile(reset, []byte(strconv.FormatUint(st.BootstrapIndex, 10)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := "00000000-1111-2222-3333-444444444444"
	resp, err := s.ACLBootstrap(ctx, &structs.ACLBootstrapRequest{BootstrapSecret: secret})
	if err != nil {
		t.Fatalf("bootstrap with the reset index: %v", err)
	}
	if resp.Token.SecretID != secret {
		t.Fatalf("secret %q, want %q", resp.Token.SecretID, secret)
	}
	if _, err := s.ACLBootstrap(ctx, &structs.ACLBootstrapRequest{}); err == nil {
		t.Fatal("the reset index allowed a second bootstrap after the reset")
	}
}

func TestACLTokenSelfNeedsToken(t *testing.T) {
	s := newACLServer(t, nil)
	_, err := s.ACLTokenSelf(context.Background(), &structs.ACLTokenSpecificRequest{})
	if structs.KindOf(err) != structs.KindPermission || err.Error() != "ACL token not found" {
		t.Fatalf("token self without a token: %v", err)
	}
}

func TestACLDisabled(t *testing.T) {
	s := newTestServer(t, nil)
	if _, err := s.ACLBootstrap(context.Background(), &structs.ACLBootstrapRequest{}); err == nil || !strings.Contains(err.Error(), "ACL support disabled") {
		t.Fatalf("bootstrap without ACLs: %v", err)
	}
}

func TestACLTokensPoliciesRoles(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newACLServer(t, func(c *Config) { c.Clock = clock })
	ctx := context.Background()
	bootstrap(t, s)

	_, err := s.ACLPolicyUpsert(ctx, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "bad", Rules: `namespace "x" { policy = "nope" }`}}})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "bad:1:") {
		t.Fatalf("bad rules: %v", err)
	}
	if _, err := s.ACLPolicyUpsert(ctx, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "ro", Rules: `namespace "default" { policy = "read" }`},
		{Name: "nodes", Rules: `node { policy = "read" }`},
	}}); err != nil {
		t.Fatal(err)
	}
	// A policy that does not exist yet is linked by name, as Nomad does.
	if _, err := s.ACLTokenUpsert(ctx, &structs.ACLTokenUpsertRequest{Token: &structs.ACLToken{Type: "client", Policies: []string{"later"}}}); err != nil {
		t.Fatalf("a token with a policy to come: %v", err)
	}
	if _, err := s.ACLTokenUpsert(ctx, &structs.ACLTokenUpsertRequest{Token: &structs.ACLToken{Type: "client", Roles: []*structs.ACLTokenRoleLink{{Name: "nope"}}}}); err == nil {
		t.Fatal("a token with a missing role was created")
	}
	role, err := s.ACLRoleUpsert(ctx, &structs.ACLRoleUpsertRequest{Role: &structs.ACLRole{Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "nodes"}}}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ACLTokenUpsert(ctx, &structs.ACLTokenUpsertRequest{Token: &structs.ACLToken{
		Name: "reader", Type: "client", Policies: []string{"ro"}, Roles: []*structs.ACLTokenRoleLink{{Name: "ops"}},
		ExpirationTTL: time.Hour,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Token.Roles[0].ID != role.Role.ID || tok.Token.ExpirationTime == nil {
		t.Fatalf("token %+v", tok.Token)
	}
	a, _, err := s.ResolveACL(ctx, tok.Token.SecretID)
	if err != nil {
		t.Fatal(err)
	}
	if !a.AllowNamespaceOperation("default", acl.NamespaceCapabilityReadJob) || !a.AllowNodeRead() || a.AllowNodeWrite() {
		t.Fatal("the token's policies and role are not merged")
	}
	// Deleting the role takes node read away (the cache follows the index).
	if _, err := s.ACLRoleDelete(ctx, &structs.ACLRoleDeleteRequest{IDs: []string{role.Role.ID}}); err != nil {
		t.Fatal(err)
	}
	if a, _, _ = s.ResolveACL(ctx, tok.Token.SecretID); a.AllowNodeRead() {
		t.Fatal("a deleted role still grants")
	}
	list, err := s.ACLTokenList(ctx, &structs.ACLTokenListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list.Tokens {
		if l.SecretID != "" {
			t.Fatal("a token list shows secrets")
		}
	}
	// Expiry: refused once the clock passes it, even from the cache.
	clock.Advance(time.Hour)
	if _, _, err := s.ResolveACL(ctx, tok.Token.SecretID); err == nil || err.Error() != "ACL token expired" {
		t.Fatalf("expired token: %v", err)
	}
	if _, _, err := s.ResolveACL(ctx, "unknown"); err == nil || err.Error() != "ACL token not found" {
		t.Fatalf("unknown token: %v", err)
	}
	// No anonymous policy: anonymous is granted nothing.
	a, _, err = s.ResolveACL(ctx, "")
	if err != nil || a.AllowNamespaceOperation("default", acl.NamespaceCapabilityListJobs) {
		t.Fatalf("anonymous: %v", err)
	}
	if _, err := s.ACLPolicyUpsert(ctx, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "anonymous", Rules: `namespace "*" { policy = "read" }`}}}); err != nil {
		t.Fatal(err)
	}
	if a, _, _ = s.ResolveACL(ctx, ""); !a.AllowNamespaceOperation("web", acl.NamespaceCapabilityListJobs) {
		t.Fatal("the anonymous policy is not applied")
	}
}

// TestACLRemoteCallsAuthorized checks the RPC port: calls over the wire
// need a token that grants the method's requirement; node calls keep
// their node secret check; in-process calls are not checked again.
func TestACLRemoteCallsAuthorized(t *testing.T) {
	s := newACLServer(t, nil)
	mgmt := bootstrap(t, s)
	ts := httptest.NewServer(rpcapi.NewHTTPHandler(s.Handlers(), slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer ts.Close()
	tr := rpcapi.NewTransport(ts.Client())
	addr := strings.TrimPrefix(ts.URL, "http://")
	call := func(token string, m *rpcapi.Info, req any) error {
		body, err := tr.Encode(m, req)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if token != "" {
			ctx = rpcapi.WithAuthToken(ctx, token)
		}
		_, err = tr.Post(ctx, addr, m, body)
		return err
	}
	cases := []struct {
		name  string
		token string
		m     *rpcapi.Info
		req   any
		want  structs.ErrorKind
	}{
		{"anonymous job list", "", rpcapi.JobList.Info(), &structs.JobListRequest{}, structs.KindPermission},
		{"management job list", mgmt.SecretID, rpcapi.JobList.Info(), &structs.JobListRequest{}, structs.KindInternal},
		{"unknown token", "nope", rpcapi.NodeList.Info(), &structs.NodeListRequest{}, structs.KindPermission},
		{"server method without the server secret", "", rpcapi.EvalAck.Info(), &structs.EvalAckRequest{}, structs.KindPermission},
		{"node call without secret", "", rpcapi.NodeUpdateStatus.Info(), &structs.NodeUpdateStatusRequest{NodeID: "x"}, structs.KindPermission},
		{"public status", "", rpcapi.StatusServers.Info(), &structs.StatusServersRequest{}, structs.KindInternal},
	}
	for _, tc := range cases {
		err := call(tc.token, tc.m, tc.req)
		got := structs.KindInternal // success
		if err != nil {
			got = structs.KindOf(err)
		}
		if got != tc.want {
			t.Errorf("%s: %v (kind %v), want kind %v", tc.name, err, got, tc.want)
		}
	}
	// In process (the HTTP API checked it already): served.
	if _, err := rpcapi.JobList.Call(context.Background(), s, &structs.JobListRequest{}); err != nil {
		t.Fatalf("in-process call: %v", err)
	}
}

func TestACLSnapshotRestore(t *testing.T) {
	s := newACLServer(t, nil)
	tok := bootstrap(t, s)
	ctx := context.Background()
	if _, err := s.ACLAuthMethodUpsert(ctx, &structs.ACLAuthMethodUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{
		jwtMethod("idp", &structs.ACLAuthMethodConfig{JWKSURL: "http://127.0.0.1:1/jwks"}),
	}}); err != nil {
		t.Fatal(err)
	}
	rule, err := s.ACLBindingRuleUpsert(ctx, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{{AuthMethod: "idp", BindType: "management"}}})
	if err != nil {
		t.Fatal(err)
	}
	ott, err := s.OneTimeTokenUpsert(rpcapi.WithAuthToken(ctx, tok.SecretID), &structs.OneTimeTokenUpsertRequest{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	fresh, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Restore(io.NopCloser(strings.NewReader(sink.String()))); err != nil {
		t.Fatal(err)
	}
	got, err := fresh.State().ACLTokenBySecret(nil, tok.SecretID)
	if err != nil || got == nil || got.AccessorID != tok.AccessorID {
		t.Fatalf("restored token %+v, %v", got, err)
	}
	st, _ := fresh.State().ACLState(nil)
	if st.BootstrapIndex == 0 {
		t.Fatal("the bootstrap index was not restored")
	}
	if m, _ := fresh.State().ACLAuthMethodByName(nil, "idp"); m == nil {
		t.Fatal("the auth method was not restored")
	}
	if r, _ := fresh.State().ACLBindingRuleByID(nil, rule.BindingRules[0].ID); r == nil {
		t.Fatal("the binding rule was not restored")
	}
	if o, _ := fresh.State().OneTimeTokenBySecret(nil, ott.OneTimeToken.OneTimeSecretID); o == nil {
		t.Fatal("the one-time token was not restored")
	}
}

// TestACLNodeSecretGrantsNodeReads checks that a node's secret ID,
// presented as the token of its calls over the wire, lets it read nodes
// and jobs (alloc watchers, templates), and no more.
func TestACLNodeSecretGrantsNodeReads(t *testing.T) {
	s := newACLServer(t, nil)
	n := testNode("node-1", 1000, 1000)
	registerNode(t, s, n)
	remote := func(m *rpcapi.Info, req any) error {
		ts := httptest.NewServer(rpcapi.NewHTTPHandler(s.Handlers(), slog.New(slog.DiscardHandler)))
		defer ts.Close()
		tr := rpcapi.NewTransport(ts.Client())
		body, err := tr.Encode(m, req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tr.Post(rpcapi.WithAuthToken(context.Background(), n.SecretID), strings.TrimPrefix(ts.URL, "http://"), m, body)
		return err
	}
	if err := remote(rpcapi.NodeGet.Info(), &structs.NodeSpecificRequest{NodeID: n.ID}); err != nil {
		t.Fatalf("node reads a node: %v", err)
	}
	if err := remote(rpcapi.JobList.Info(), &structs.JobListRequest{}); err != nil {
		t.Fatalf("node lists jobs: %v", err)
	}
	if err := remote(rpcapi.JobRegister.Info(), &structs.JobRegisterRequest{Job: testJob("x", 1, 10, 10)}); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("node registers a job: %v, want permission denied", err)
	}
}
