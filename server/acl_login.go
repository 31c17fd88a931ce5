package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-bexpr"

	"github.com/drover-io/drover/structs"
)

// defaultTokenNameFormat names the tokens of logins, as Nomad's.
const defaultTokenNameFormat = "${auth_method_type}-${auth_method_name}"

// Bounds of fetching an auth method's keys.
const (
	jwksFetchTimeout = 10 * time.Second
	maxJWKSSize      = 1 << 20
)

// defaultSigningAlgs are the JWS algorithms a JWT auth method accepts
// when its config names none.
var defaultSigningAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.EdDSA}

// ACLLogin logs in with a JWT auth method: it validates the JWT (its
// signature by one of the method's keys, its times, audience and issuer),
// maps its claims, and makes a token from the binding rules that match.
// A login no rule matches is refused.
func (s *Server) ACLLogin(ctx context.Context, req *structs.ACLLoginRequest) (*structs.ACLTokenResponse, error) {
	if !s.config.ACLEnabled {
		return nil, errACLDisabled
	}
	if req.LoginToken == "" {
		return nil, structs.Invalid("missing login token: give the JWT of your identity provider")
	}
	st := s.fsm.State()
	method, err := s.loginAuthMethod(req.AuthMethodName)
	if err != nil {
		return nil, err
	}
	if method.Type != structs.ACLAuthMethodTypeJWT {
		return nil, structs.Invalid("auth method %q is of type %s: drover logs in only with JWT auth methods (the OIDC browser flow is not supported)", method.Name, method.Type)
	}
	claims, err := s.validateLoginJWT(ctx, method, req.LoginToken)
	if err != nil {
		s.logger.Warn("ACL login refused", "auth_method", method.Name, "error", err)
		return nil, err
	}
	vars := mapLoginClaims(method.Config, claims)
	rules, err := st.ACLBindingRulesByAuthMethod(nil, method.Name)
	if err != nil {
		return nil, err
	}
	tok := &structs.ACLToken{
		AccessorID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Type: structs.ACLClientToken,
		Global: method.TokenLocality == structs.ACLAuthMethodTokenLocalityGlobal, CreateTime: s.clock.Now().UTC(),
	}
	matched := false
	for _, r := range rules {
		ev, err := compileSelector(r.Selector)
		if err != nil {
			return nil, fmt.Errorf("binding rule %s: selector %q: %w", r.ID, r.Selector, err)
		}
		if ev != nil {
			ok, err := ev.Evaluate(vars)
			if err != nil || !ok {
				continue
			}
		}
		name := vars.interpolate(r.BindName)
		switch r.BindType {
		case structs.ACLBindingRuleBindTypeManagement:
			matched = true
			tok.Type = structs.ACLManagementToken
		case structs.ACLBindingRuleBindTypeRole:
			role, err := st.ACLRoleByName(nil, name)
			if err != nil {
				return nil, err
			}
			if role != nil { // a rule naming no role grants nothing
				matched = true
				tok.Roles = append(tok.Roles, &structs.ACLTokenRoleLink{ID: role.ID, Name: role.Name})
			}
		case structs.ACLBindingRuleBindTypePolicy:
			p, err := st.ACLPolicyByName(nil, name)
			if err != nil {
				return nil, err
			}
			if p != nil {
				matched = true
				tok.Policies = append(tok.Policies, p.Name)
			}
		}
	}
	if !matched {
		return nil, structs.NewError(structs.KindPermission,
			"no binding rule of auth method %q matches the login's claims: nothing to grant", method.Name)
	}
	if tok.Type == structs.ACLManagementToken {
		tok.Policies, tok.Roles = nil, nil
	}
	slices.Sort(tok.Policies)
	tok.Policies = slices.Compact(tok.Policies)
	tok.Name = strings.NewReplacer("${auth_method_type}", method.Type, "${auth_method_name}", method.Name).
		Replace(vars.interpolate(method.TokenNameFormat))
	if len(tok.Name) > 256 {
		tok.Name = tok.Name[:256]
	}
	exp := tok.CreateTime.Add(method.MaxTokenTTL)
	tok.ExpirationTime, tok.ExpirationTTL = &exp, method.MaxTokenTTL
	index, _, err := s.raftApply(ACLTokenUpsertRequestType, &ACLTokenUpsertCommand{Tokens: []*structs.ACLToken{tok}})
	if err != nil {
		return nil, err
	}
	stored, err := s.fsm.State().ACLTokenByAccessor(nil, tok.AccessorID)
	if err != nil {
		return nil, err
	}
	return &structs.ACLTokenResponse{Token: stored.Copy(), WriteMeta: structs.WriteMeta{Index: index}}, nil
}

// loginAuthMethod returns the named auth method, or the default one for
// "".
func (s *Server) loginAuthMethod(name string) (*structs.ACLAuthMethod, error) {
	st := s.fsm.State()
	if name != "" {
		m, err := st.ACLAuthMethodByName(nil, name)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, structs.NotFound("ACL auth method", name)
		}
		return m, nil
	}
	ms, err := st.ACLAuthMethods(nil, "")
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Default {
			return m, nil
		}
	}
	return nil, structs.Invalid("no default auth method: name one (-method)")
}

// validateLoginJWT checks a JWT against an auth method's config and
// returns its claims. Failures are KindPermission errors saying why.
func (s *Server) validateLoginJWT(ctx context.Context, m *structs.ACLAuthMethod, raw string) (map[string]any, error) {
	cfg := m.Config
	algs := defaultSigningAlgs
	if len(cfg.SigningAlgs) > 0 {
		algs = nil
		for _, a := range cfg.SigningAlgs {
			algs = append(algs, jose.SignatureAlgorithm(a))
		}
	}
	tok, err := jwt.ParseSigned(raw, algs)
	if err != nil {
		return nil, loginDenied("the login token is not a signed JWT of an accepted algorithm: %v", err)
	}
	keys, err := s.authMethodKeys(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var (
		claims map[string]any
		std    jwt.Claims
		ok     bool
	)
	kid := ""
	if len(tok.Headers) > 0 {
		kid = tok.Headers[0].KeyID
	}
	for _, k := range keys {
		if kid != "" && k.KeyID != "" && k.KeyID != kid {
			continue
		}
		if err := tok.Claims(k.Key, &claims, &std); err == nil {
			ok = true
			break
		}
	}
	if !ok {
		return nil, loginDenied("the login token's signature does not verify with any key of auth method %q", m.Name)
	}
	leeway := max(cfg.ClockSkewLeeway, cfg.ExpirationLeeway, cfg.NotBeforeLeeway, jwt.DefaultLeeway)
	exp := jwt.Expected{Time: s.clock.Now()}
	if len(cfg.BoundAudiences) > 0 {
		exp.AnyAudience = jwt.Audience(cfg.BoundAudiences)
	}
	if err := std.ValidateWithLeeway(exp, leeway); err != nil {
		return nil, loginDenied("the login token is not valid for auth method %q: %v", m.Name, err)
	}
	if len(cfg.BoundIssuer) > 0 && !slices.Contains(cfg.BoundIssuer, std.Issuer) {
		return nil, loginDenied("the login token's issuer %q is not one of auth method %q's bound issuers", std.Issuer, m.Name)
	}
	return claims, nil
}

func loginDenied(format string, args ...any) error {
	return structs.NewError(structs.KindPermission, "ACL login failed: "+format, args...)
}

// authMethodKeys returns the keys that may sign a login's JWT: the
// config's PEM keys, or those published at its JWKS URL (or at the one
// its OIDC discovery document names).
func (s *Server) authMethodKeys(ctx context.Context, cfg *structs.ACLAuthMethodConfig) ([]jose.JSONWebKey, error) {
	if len(cfg.JWTValidationPubKeys) > 0 {
		var out []jose.JSONWebKey
		for i, p := range cfg.JWTValidationPubKeys {
			k, err := parsePublicKeyPEM(p)
			if err != nil {
				return nil, structs.Invalid("the auth method's JWTValidationPubKeys[%d]: %v", i, err)
			}
			out = append(out, jose.JSONWebKey{Key: k})
		}
		return out, nil
	}
	client, err := jwksClient(cfg.JWKSCACert)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, jwksFetchTimeout)
	defer cancel()
	url := cfg.JWKSURL
	if url == "" && cfg.OIDCDiscoveryURL != "" {
		var doc struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := fetchJSON(ctx, client, strings.TrimSuffix(cfg.OIDCDiscoveryURL, "/")+"/.well-known/openid-configuration", &doc); err != nil {
			return nil, err
		}
		url = doc.JWKSURI
	}
	if url == "" {
		return nil, structs.Invalid("the auth method has no keys: set JWTValidationPubKeys, JWKSURL or OIDCDiscoveryURL")
	}
	var set jose.JSONWebKeySet
	if err := fetchJSON(ctx, client, url, &set); err != nil {
		return nil, err
	}
	return set.Keys, nil
}

func jwksClient(caPEM string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caPEM)) {
			return nil, structs.Invalid("the auth method's JWKSCACert holds no PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}

func fetchJSON(ctx context.Context, c *http.Client, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return structs.Invalid("the auth method's key URL %q: %v", url, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return structs.NewError(structs.KindUnavailable, "fetch the auth method's keys from %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return structs.NewError(structs.KindUnavailable, "fetch the auth method's keys from %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSSize))
	if err != nil {
		return structs.NewError(structs.KindUnavailable, "fetch the auth method's keys from %s: %v", url, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return structs.NewError(structs.KindUnavailable, "the auth method's keys at %s are not valid JSON: %v", url, err)
	}
	return nil
}

func parsePublicKeyPEM(p string) (any, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, errors.New("not a PEM block")
	}
	switch block.Type {
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		return c.PublicKey, nil
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(block.Bytes)
	default:
		return x509.ParsePKIXPublicKey(block.Bytes)
	}
}

// loginVars are a login's mapped claims, as a binding rule's selector
// sees them: value.<name> and list.<name>.
type loginVars struct {
	Value map[string]string   `bexpr:"value"`
	List  map[string][]string `bexpr:"list"`
}

// mapLoginClaims maps claims by the config's ClaimMappings (a claim name,
// or a JSON pointer such as /org/team) and ListClaimMappings.
func mapLoginClaims(cfg *structs.ACLAuthMethodConfig, claims map[string]any) *loginVars {
	v := &loginVars{Value: map[string]string{}, List: map[string][]string{}}
	for claim, name := range cfg.ClaimMappings {
		switch x := lookupClaim(claims, claim).(type) {
		case string:
			v.Value[name] = x
		case bool, float64, json.Number:
			v.Value[name] = fmt.Sprint(x)
		}
	}
	for claim, name := range cfg.ListClaimMappings {
		switch x := lookupClaim(claims, claim).(type) {
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					v.List[name] = append(v.List[name], s)
				} else if e != nil {
					v.List[name] = append(v.List[name], fmt.Sprint(e))
				}
			}
		case string:
			v.List[name] = []string{x}
		}
	}
	return v
}

func lookupClaim(claims map[string]any, path string) any {
	if !strings.HasPrefix(path, "/") {
		return claims[path]
	}
	var cur any = claims
	for _, part := range strings.Split(path[1:], "/") {
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// interpolate replaces ${value.<name>} in s by the mapped claim.
func (v *loginVars) interpolate(s string) string {
	if !strings.Contains(s, "${value.") {
		return s
	}
	pairs := make([]string, 0, 2*len(v.Value))
	for k, val := range v.Value {
		pairs = append(pairs, "${value."+k+"}", val)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// compileSelector compiles a binding rule's selector; nil for an empty
// one (it matches every login).
func compileSelector(sel string) (*bexpr.Evaluator, error) {
	if strings.TrimSpace(sel) == "" {
		return nil, nil
	}
	return bexpr.CreateEvaluator(sel, bexpr.WithTagName("bexpr"), bexpr.WithUnknownValue(""))
}
