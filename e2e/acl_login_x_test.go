package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	nomad "github.com/hashicorp/nomad/api"
)

// TestACLLoginWithJWTAuthMethod logs in through a JWT auth method made
// with the CLI: the identity provider is a JWKS server on loopback, a
// binding rule gives the members of a group a read-only policy, and the
// token of `acl login` reads jobs, cannot write them, reads its own policy
// and not another. It also trades the token for a one-time token and back.
// It runs in parallel with the other tests (its own agent and port).
func TestACLLoginWithJWTAuthMethod(t *testing.T) {
	t.Parallel()
	a := startACLAgent(t)
	anon, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	boot, _, err := anon.ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := nomad.NewClient(&nomad.Config{Address: a.addr, SecretID: boot.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	for name, rules := range map[string]string{
		"readers": `namespace "default" { policy = "read" }`,
		"ops":     `operator { policy = "write" }`,
	} {
		if _, err := mgmt.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: name, Rules: rules}, nil); err != nil {
			t.Fatal(err)
		}
	}

	// The identity provider: an ECDSA key published as a JWKS.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}}
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(set) }))
	defer idp.Close()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(groups ...string) string {
		now := time.Now()
		raw, err := jwt.Signed(signer).Claims(jwt.Claims{
			Issuer: "https://idp.test", Subject: "alice", Audience: jwt.Audience{"drover"},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)), Expiry: jwt.NewNumericDate(now.Add(10 * time.Minute)),
		}).Claims(map[string]any{"groups": groups}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}

	cfg := writeFile(t, "idp.json", `{"JWKSURL": "`+idp.URL+`", "BoundAudiences": ["drover"], "BoundIssuer": ["https://idp.test"], "ListClaimMappings": {"groups": "groups"}}`)
	if r := a.cli(t, "acl", "auth-method", "create", "-token", boot.SecretID, "-name", "idp", "-type", "JWT",
		"-token-locality", "local", "-max-token-ttl", "1h", "-default", "-config", "@"+cfg); r.code != 0 {
		t.Fatalf("acl auth-method create: %s", r)
	}
	if r := a.cli(t, "acl", "binding-rule", "create", "-token", boot.SecretID, "-auth-method", "idp",
		"-selector", "engineering in list.groups", "-bind-type", "policy", "-bind-name", "readers"); r.code != 0 {
		t.Fatalf("acl binding-rule create: %s", r)
	}
	// Anyone lists the auth methods (to know how to log in).
	if r := a.cli(t, "acl", "auth-method", "list"); r.code != 0 || !strings.Contains(r.stdout, "idp") {
		t.Fatalf("anonymous acl auth-method list: %s", r)
	}

	if r := a.cli(t, "acl", "login", "-login-token", sign("sales")); r.code == 0 || !strings.Contains(r.stderr, "no binding rule") {
		t.Fatalf("a login no rule matches: %s", r)
	}
	r := a.cli(t, "acl", "login", "-login-token", sign("engineering"), "-json")
	if r.code != 0 {
		t.Fatalf("acl login: %s", r)
	}
	var tok nomad.ACLToken
	if err := json.Unmarshal([]byte(r.stdout), &tok); err != nil || tok.SecretID == "" || tok.Type != "client" || tok.ExpirationTime == nil {
		t.Fatalf("the login's token %+v (%v):\n%s", tok, err, r.stdout)
	}
	user, err := nomad.NewClient(&nomad.Config{Address: a.addr, SecretID: tok.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := user.Jobs().List(nil); err != nil {
		t.Fatalf("the login's token cannot list jobs: %v", err)
	}
	job := nomad.NewBatchJob("login-e2e", "login-e2e", "global", 50)
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "raw_exec").SetConfig("command", "/bin/true")))
	if _, _, err := user.Jobs().Register(job, nil); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("the login's read-only token registered a job: %v", err)
	}
	// Its own policy, not another.
	if r := a.cli(t, "acl", "policy", "info", "-token", tok.SecretID, "readers"); r.code != 0 {
		t.Fatalf("acl policy info of its own policy: %s", r)
	}
	if r := a.cli(t, "acl", "policy", "info", "-token", tok.SecretID, "ops"); r.code == 0 || !strings.Contains(r.stderr, "Permission denied") {
		t.Fatalf("acl policy info of another policy: %s", r)
	}
	if r := a.cli(t, "acl", "policy", "self", "-token", tok.SecretID); r.code != 0 || !strings.Contains(r.stdout, "readers") || strings.Contains(r.stdout, "ops") {
		t.Fatalf("acl policy self: %s", r)
	}

	// A one-time token, exchanged once.
	ott, _, err := user.ACLTokens().UpsertOneTimeToken(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := anon.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
	if err != nil || got.AccessorID != tok.AccessorID {
		t.Fatalf("exchange: %+v, %v", got, err)
	}
	if _, _, err := anon.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil); err == nil {
		t.Fatal("a one-time token was exchanged twice")
	}
}
