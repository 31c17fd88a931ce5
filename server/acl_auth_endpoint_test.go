package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

func jwtMethod(name string, cfg *structs.ACLAuthMethodConfig) *structs.ACLAuthMethod {
	return &structs.ACLAuthMethod{Name: name, Type: structs.ACLAuthMethodTypeJWT, TokenLocality: "local", MaxTokenTTL: time.Hour, Config: cfg}
}

func TestACLAuthMethodsAndBindingRulesCRUD(t *testing.T) {
	s := newACLServer(t, nil)
	ctx := context.Background()
	bootstrap(t, s)

	if _, err := s.ACLAuthMethodUpsert(ctx, &structs.ACLAuthMethodUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{
		{Name: "bad", Type: "LDAP", TokenLocality: "local", MaxTokenTTL: time.Hour, Config: &structs.ACLAuthMethodConfig{}},
	}}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("an auth method of an unknown type: %v", err)
	}
	oidc := &structs.ACLAuthMethod{Name: "oidc", Type: "OIDC", TokenLocality: "global", MaxTokenTTL: time.Hour, Default: true,
		Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://example.com", OIDCClientID: "id"}}
	jm := jwtMethod("jwt", &structs.ACLAuthMethodConfig{JWKSURL: "http://127.0.0.1:1/jwks"})
	jm.Default = true
	for _, m := range []*structs.ACLAuthMethod{oidc, jm} {
		resp, err := s.ACLAuthMethodUpsert(ctx, &structs.ACLAuthMethodUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{m}})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.AuthMethods[0]; got.CreateIndex == 0 || got.TokenNameFormat != defaultTokenNameFormat {
			t.Fatalf("stored %+v", got)
		}
	}
	list, err := s.ACLAuthMethodList(ctx, &structs.ACLAuthMethodListRequest{})
	if err != nil || len(list.AuthMethods) != 2 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	for _, m := range list.AuthMethods {
		if m.Config != nil {
			t.Errorf("%s: the list (open to anyone) shows the config", m.Name)
		}
		if m.Default != (m.Name == "jwt") {
			t.Errorf("%s default=%v: only the last written default stays default", m.Name, m.Default)
		}
	}

	if _, err := s.ACLBindingRuleUpsert(ctx, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{
		{AuthMethod: "nope", BindType: "management"},
	}}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a rule of a missing auth method: %v", err)
	}
	if _, err := s.ACLBindingRuleUpsert(ctx, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{
		{AuthMethod: "jwt", BindType: "management", Selector: "value.x =="},
	}}); structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "selector") {
		t.Fatalf("a rule whose selector does not parse: %v", err)
	}
	br, err := s.ACLBindingRuleUpsert(ctx, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{
		{AuthMethod: "jwt", BindType: "role", BindName: "ops", Selector: "eng in list.groups", Description: "d"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rule := br.BindingRules[0]
	rule.Description = "updated"
	upd, err := s.ACLBindingRuleUpsert(ctx, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{rule}})
	if err != nil || upd.BindingRules[0].ID != rule.ID || upd.BindingRules[0].Description != "updated" || upd.BindingRules[0].CreateIndex != rule.CreateIndex {
		t.Fatalf("update: %+v, %v", upd, err)
	}
	if _, err := s.ACLBindingRuleUpsert(ctx, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{
		{ID: "unknown", AuthMethod: "jwt", BindType: "management"},
	}}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("update of a missing rule: %v", err)
	}
	// Deleting the auth method deletes its rules.
	if _, err := s.ACLAuthMethodDelete(ctx, &structs.ACLAuthMethodDeleteRequest{Names: []string{"jwt"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ACLBindingRuleGet(ctx, &structs.ACLBindingRuleGetRequest{ID: rule.ID}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("the rule of a deleted auth method: %v", err)
	}
	if _, err := s.ACLAuthMethodDelete(ctx, &structs.ACLAuthMethodDeleteRequest{Names: []string{"jwt"}}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete twice: %v", err)
	}
}

// jwtIssuer signs test JWTs with an ECDSA key and serves its JWKS on
// loopback.
type jwtIssuer struct {
	key *ecdsa.PrivateKey
	kid string
}

func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &jwtIssuer{key: k, kid: "key-1"}
}

func (i *jwtIssuer) pubPEM(t *testing.T) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&i.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func (i *jwtIssuer) jwksServer(t *testing.T) *httptest.Server {
	t.Helper()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &i.key.PublicKey, KeyID: i.kid, Algorithm: "ES256", Use: "sig"}}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (i *jwtIssuer) sign(t *testing.T, std jwt.Claims, extra map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: i.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", i.kid))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(std).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestACLLoginWithJWT(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newACLServer(t, func(c *Config) { c.Clock = clock })
	ctx := context.Background()
	bootstrap(t, s)
	iss := newJWTIssuer(t)
	jwks := iss.jwksServer(t)

	if _, err := s.ACLPolicyUpsert(ctx, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "nodes", Rules: `node { policy = "read" }`},
		{Name: "team-web", Rules: `namespace "web" { policy = "write" }`},
	}}); err != nil {
		t.Fatal(err)
	}
	role, err := s.ACLRoleUpsert(ctx, &structs.ACLRoleUpsertRequest{Role: &structs.ACLRole{Name: "ops", Policies: []*structs.ACLRolePolicyLink{{Name: "nodes"}}}})
	if err != nil {
		t.Fatal(err)
	}
	mapping := func(cfg *structs.ACLAuthMethodConfig) *structs.ACLAuthMethodConfig {
		cfg.BoundAudiences = []string{"drover"}
		cfg.BoundIssuer = []string{"https://idp.test"}
		cfg.ClaimMappings = map[string]string{"team": "team", "/org/unit": "unit"}
		cfg.ListClaimMappings = map[string]string{"groups": "groups"}
		return cfg
	}
	for _, m := range []*structs.ACLAuthMethod{
		jwtMethod("static", mapping(&structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{iss.pubPEM(t)}})),
		jwtMethod("jwks", mapping(&structs.ACLAuthMethodConfig{JWKSURL: jwks.URL})),
		{Name: "browser", Type: "OIDC", TokenLocality: "local", MaxTokenTTL: time.Hour, Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://example.com"}},
	} {
		if _, err := s.ACLAuthMethodUpsert(ctx, &structs.ACLAuthMethodUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{m}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, method := range []string{"static", "jwks"} {
		if _, err := s.ACLBindingRuleUpsert(ctx, &structs.ACLBindingRuleUpsertRequest{BindingRules: []*structs.ACLBindingRule{
			{AuthMethod: method, Selector: `ops in list.groups`, BindType: "role", BindName: "ops"},
			{AuthMethod: method, Selector: `value.unit == "web"`, BindType: "policy", BindName: "team-${value.team}"},
			{AuthMethod: method, Selector: `admins in list.groups`, BindType: "management"},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	now := clock.Now()
	std := func() jwt.Claims {
		return jwt.Claims{Issuer: "https://idp.test", Subject: "alice", Audience: jwt.Audience{"drover"},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute))}
	}
	claims := map[string]any{"team": "web", "org": map[string]any{"unit": "web"}, "groups": []string{"ops", "dev"}}

	for _, method := range []string{"static", "jwks"} {
		resp, err := s.ACLLogin(ctx, &structs.ACLLoginRequest{AuthMethodName: method, LoginToken: iss.sign(t, std(), claims)})
		if err != nil {
			t.Fatalf("%s: login: %v", method, err)
		}
		tok := resp.Token
		if tok.Type != "client" || !slices.Equal(tok.Policies, []string{"team-web"}) || len(tok.Roles) != 1 || tok.Roles[0].ID != role.Role.ID {
			t.Fatalf("%s: token %+v", method, tok)
		}
		if tok.Name != "JWT-"+method || tok.ExpirationTime == nil || !tok.ExpirationTime.Equal(now.Add(time.Hour)) {
			t.Fatalf("%s: token name %q, expiry %v", method, tok.Name, tok.ExpirationTime)
		}
		a, _, err := s.ResolveACL(ctx, tok.SecretID)
		if err != nil || !a.AllowNodeRead() || !a.AllowNamespaceOperation("web", "submit-job") || a.AllowNamespaceOperation("default", "read-job") {
			t.Fatalf("%s: the login's token grants the wrong things: %v", method, err)
		}
	}

	admin, err := s.ACLLogin(ctx, &structs.ACLLoginRequest{AuthMethodName: "static", LoginToken: iss.sign(t, std(), map[string]any{"groups": []string{"admins"}})})
	if err != nil || admin.Token.Type != "management" || len(admin.Token.Policies) != 0 {
		t.Fatalf("management binding: %+v, %v", admin, err)
	}

	other := newJWTIssuer(t)
	expired := std()
	expired.Expiry = jwt.NewNumericDate(now.Add(-time.Hour))
	wrongAud := std()
	wrongAud.Audience = jwt.Audience{"someone-else"}
	wrongIss := std()
	wrongIss.Issuer = "https://evil.test"
	for _, tc := range []struct {
		name, method, token string
		want                structs.ErrorKind
		msg                 string
	}{
		{"no rule matches", "static", iss.sign(t, std(), map[string]any{"groups": []string{"nobody"}}), structs.KindPermission, "no binding rule"},
		{"signed by another key", "static", other.sign(t, std(), claims), structs.KindPermission, "signature"},
		{"expired", "static", iss.sign(t, expired, claims), structs.KindPermission, "expired"},
		{"wrong audience", "jwks", iss.sign(t, wrongAud, claims), structs.KindPermission, "audience"},
		{"wrong issuer", "static", iss.sign(t, wrongIss, claims), structs.KindPermission, "issuer"},
		{"not a JWT", "static", "garbage", structs.KindPermission, "not a signed JWT"},
		{"OIDC method", "browser", iss.sign(t, std(), claims), structs.KindInvalid, "OIDC"},
		{"unknown method", "nope", iss.sign(t, std(), claims), structs.KindNotFound, "nope"},
		{"no default method", "", iss.sign(t, std(), claims), structs.KindInvalid, "default"},
	} {
		_, err := s.ACLLogin(ctx, &structs.ACLLoginRequest{AuthMethodName: tc.method, LoginToken: tc.token})
		if structs.KindOf(err) != tc.want || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want kind %v mentioning %q", tc.name, err, tc.want, tc.msg)
		}
	}
}

func TestACLOneTimeTokens(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newACLServer(t, func(c *Config) { c.Clock = clock })
	ctx := context.Background()
	bootstrap(t, s)
	tok, err := s.ACLTokenUpsert(ctx, &structs.ACLTokenUpsertRequest{Token: &structs.ACLToken{Type: "client", Policies: []string{"foo1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.OneTimeTokenUpsert(ctx, &structs.OneTimeTokenUpsertRequest{}); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("a one-time token without a token: %v", err)
	}
	caller := rpcapi.WithAuthToken(ctx, tok.Token.SecretID)
	ott, err := s.OneTimeTokenUpsert(caller, &structs.OneTimeTokenUpsertRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ott.OneTimeToken.AccessorID != tok.Token.AccessorID || !ott.OneTimeToken.ExpiresAt.Equal(clock.Now().Add(structs.OneTimeTokenTTL)) {
		t.Fatalf("one-time token %+v", ott.OneTimeToken)
	}
	got, err := s.OneTimeTokenExchange(ctx, &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: ott.OneTimeToken.OneTimeSecretID})
	if err != nil || got.Token.SecretID != tok.Token.SecretID {
		t.Fatalf("exchange: %+v, %v", got, err)
	}
	if _, err := s.OneTimeTokenExchange(ctx, &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: ott.OneTimeToken.OneTimeSecretID}); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("a second exchange: %v", err)
	}
	// An expired one is refused, and dropped when the next is made.
	late, err := s.OneTimeTokenUpsert(caller, &structs.OneTimeTokenUpsertRequest{})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(structs.OneTimeTokenTTL)
	if _, err := s.OneTimeTokenExchange(ctx, &structs.OneTimeTokenExchangeRequest{OneTimeSecretID: late.OneTimeToken.OneTimeSecretID}); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired one-time token: %v", err)
	}
	stale, err := s.OneTimeTokenUpsert(caller, &structs.OneTimeTokenUpsertRequest{})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(structs.OneTimeTokenTTL + time.Second)
	if _, err := s.OneTimeTokenUpsert(caller, &structs.OneTimeTokenUpsertRequest{}); err != nil {
		t.Fatal(err)
	}
	if o, _ := s.fsm.State().OneTimeTokenBySecret(nil, stale.OneTimeToken.OneTimeSecretID); o != nil {
		t.Fatal("an expired one-time token was kept")
	}
}

func TestACLTokenReadsItsOwnPolicies(t *testing.T) {
	s := newACLServer(t, nil)
	ctx := context.Background()
	bootstrap(t, s)
	if _, err := s.ACLPolicyUpsert(ctx, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "mine", Rules: `node { policy = "read" }`},
		{Name: "via-role", Rules: `agent { policy = "read" }`},
		{Name: "other", Rules: `operator { policy = "read" }`},
	}}); err != nil {
		t.Fatal(err)
	}
	role, err := s.ACLRoleUpsert(ctx, &structs.ACLRoleUpsertRequest{Role: &structs.ACLRole{Name: "r", Policies: []*structs.ACLRolePolicyLink{{Name: "via-role"}}}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.ACLRoleUpsert(ctx, &structs.ACLRoleUpsertRequest{Role: &structs.ACLRole{Name: "o", Policies: []*structs.ACLRolePolicyLink{{Name: "other"}}}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ACLTokenUpsert(ctx, &structs.ACLTokenUpsertRequest{Token: &structs.ACLToken{Type: "client", Policies: []string{"mine"}, Roles: []*structs.ACLTokenRoleLink{{ID: role.Role.ID}}}})
	if err != nil {
		t.Fatal(err)
	}
	caller := rpcapi.WithAuthToken(ctx, tok.Token.SecretID)
	anonymous := rpcapi.WithAuthToken(ctx, "")
	for _, tc := range []struct {
		ctx    context.Context
		policy string
		ok     bool
	}{
		{caller, "mine", true}, {caller, "via-role", true}, {caller, "other", false},
		{anonymous, "mine", false},
	} {
		_, err := s.ACLPolicyGet(tc.ctx, &structs.ACLPolicySpecificRequest{Name: tc.policy})
		if (err == nil) != tc.ok {
			t.Errorf("policy %s: %v, want allowed=%v", tc.policy, err, tc.ok)
		}
	}
	if _, err := s.ACLRoleGet(caller, &structs.ACLRoleSpecificRequest{ID: role.Role.ID}); err != nil {
		t.Errorf("its own role: %v", err)
	}
	if _, err := s.ACLRoleGet(caller, &structs.ACLRoleSpecificRequest{ID: other.Role.ID}); structs.KindOf(err) != structs.KindPermission {
		t.Errorf("another role: %v", err)
	}
	self, err := s.ACLPolicySelf(caller, &structs.ACLPolicySelfRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range self.Policies {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"mine", "via-role"}) {
		t.Fatalf("policy self: %v", names)
	}
}

func TestACLClientIntroductionToken(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newACLServer(t, func(c *Config) { c.Clock = clock })
	ctx := context.Background()
	for _, tc := range []struct {
		req      structs.ClientIntroductionTokenRequest
		pool     string
		lifetime time.Duration
	}{
		{structs.ClientIntroductionTokenRequest{}, "default", structs.ClientIntroductionTokenDefaultTTL},
		{structs.ClientIntroductionTokenRequest{TTL: time.Hour, NodePool: "gpu", NodeName: "n1"}, "gpu", time.Hour},
	} {
		resp, err := s.ClientIntroductionToken(ctx, &tc.req)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(resp.JWT, ".")
		if len(parts) != 3 {
			t.Fatalf("not a JWT: %q", resp.JWT)
		}
		b, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var c structs.ClientIntroductionClaims
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if c.NodePool != tc.pool || c.NodeName != tc.req.NodeName || c.Expiry != clock.Now().Add(tc.lifetime).Unix() {
			t.Errorf("claims %+v", c)
		}
	}
	if _, err := s.ClientIntroductionToken(ctx, &structs.ClientIntroductionTokenRequest{TTL: 48 * time.Hour}); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("a TTL past the bound: %v", err)
	}
}
