package server

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// placedAlloc registers a node and a job whose task has identity blocks,
// and returns the allocation the scheduler placed.
func placedAlloc(t *testing.T, s *Server) (*structs.Node, *structs.Allocation) {
	t.Helper()
	node := testNode("n1", 4000, 4096)
	registerNode(t, s, node)
	job := testJob("web", 1, 100, 64)
	job.TaskGroups[0].Tasks[0].Identity = &structs.TaskIdentity{Env: true, File: true}
	job.TaskGroups[0].Tasks[0].Identities = []*structs.TaskIdentity{{Name: "vault", Audience: []string{"vault.io"}, TTL: time.Hour}}
	registerJob(t, s, job)
	var alloc *structs.Allocation
	waitState(t, s, "the alloc placed", func(ws memdb.WatchSet) (bool, string) {
		as := allocsOfWatch(t, s, ws, "web", structs.AllocDesiredStatusRun)
		if len(as) != 1 {
			return false, "no alloc yet"
		}
		alloc = as[0]
		return true, ""
	})
	return node, alloc
}

func signAll(t *testing.T, s *Server, node *structs.Node, alloc *structs.Allocation) map[string]*structs.SignedIdentity {
	t.Helper()
	resp, err := s.AllocSignIdentities(context.Background(), &structs.AllocSignIdentitiesRequest{
		NodeID: node.ID, SecretID: node.SecretID, AllocID: alloc.ID, Task: "app",
	})
	if err != nil {
		t.Fatalf("AllocSignIdentities: %v", err)
	}
	out := map[string]*structs.SignedIdentity{}
	for _, id := range resp.Identities {
		out[id.Name] = id
	}
	return out
}

func TestWorkloadIdentitySignAndVerify(t *testing.T) {
	clock := &fakeClock{now: time.Now()}
	s := newTestServer(t, func(c *Config) { c.Clock = clock; c.Region = "global" })
	node, alloc := placedAlloc(t, s)
	ctx := context.Background()

	// Only the node the allocation is placed on, with its secret.
	other := testNode("n2", 4000, 4096)
	registerNode(t, s, other)
	for name, req := range map[string]*structs.AllocSignIdentitiesRequest{
		"no secret":    {NodeID: node.ID, AllocID: alloc.ID, Task: "app"},
		"wrong secret": {NodeID: node.ID, SecretID: "nope", AllocID: alloc.ID, Task: "app"},
		"other node":   {NodeID: other.ID, SecretID: other.SecretID, AllocID: alloc.ID, Task: "app"},
	} {
		if _, err := s.AllocSignIdentities(ctx, req); structs.KindOf(err) != structs.KindPermission {
			t.Errorf("%s: %v, want permission denied", name, err)
		}
	}
	if _, err := s.AllocSignIdentities(ctx, &structs.AllocSignIdentitiesRequest{
		NodeID: node.ID, SecretID: node.SecretID, AllocID: alloc.ID, Task: "nope",
	}); structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("unknown task: %v", err)
	}

	ids := signAll(t, s, node, alloc)
	if len(ids) != 2 || ids["default"] == nil || ids["vault"] == nil {
		t.Fatalf("signed %+v, want default and vault", ids)
	}
	if ids["default"].Expiry != 0 || ids["vault"].Expiry != clock.Now().Add(time.Hour).Unix() {
		t.Errorf("expiries: default %d, vault %d", ids["default"].Expiry, ids["vault"].Expiry)
	}
	claims, err := s.VerifyIdentity(ids["default"].JWT)
	if err != nil {
		t.Fatalf("VerifyIdentity: %v", err)
	}
	want := structs.IdentityClaims{
		Namespace: "default", JobID: "web", AllocationID: alloc.ID, Task: "app", Group: "web", IdentityName: "default",
		Subject: "global:default:web:web:app:default", Audience: structs.AudienceList{"nomadproject.io"},
		IssuedAt: clock.Now().Unix(), NotBefore: clock.Now().Unix(),
	}
	claims.JTI = ""
	if got, _ := json.Marshal(claims); string(got) != string(must(json.Marshal(want))) {
		t.Errorf("claims\n got %s\nwant %s", got, must(json.Marshal(want)))
	}
	vault, err := s.VerifyIdentity(ids["vault"].JWT)
	if err != nil || len(vault.Audience) != 1 || vault.Audience[0] != "vault.io" {
		t.Fatalf("vault identity: %+v, %v", vault, err)
	}

	// A third party verifies with the published keys alone.
	pubs, err := s.KeyringPublicKeys(ctx, &structs.KeyringPublicKeysRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !verifyWithKeys(t, ids["default"].JWT, pubs.PublicKeys) {
		t.Error("the token does not verify with the published public keys")
	}

	// Tampered, unsigned, malformed tokens are refused.
	parts := strings.Split(ids["default"].JWT, ".")
	forged := strings.Replace(string(must(base64.RawURLEncoding.DecodeString(parts[1]))), `"nomad_job_id":"web"`, `"nomad_job_id":"db"`, 1)
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	for name, tok := range map[string]string{
		"tampered claims": parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2],
		"alg none":        none + "." + parts[1] + ".",
		"two parts":       parts[0] + "." + parts[1],
		"garbage":         "not.a.jwt",
		"empty":           "",
	} {
		if _, err := s.VerifyIdentity(tok); structs.KindOf(err) != structs.KindPermission {
			t.Errorf("%s: %v, want permission denied", name, err)
		}
	}

	// A rotated keyring still verifies what the former key signed, and
	// signs with the new key.
	rot, err := s.KeyringRotate(ctx, &structs.KeyringRotateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyIdentity(ids["default"].JWT); err != nil {
		t.Errorf("after rotation, an identity of the former key: %v", err)
	}
	fresh := signAll(t, s, node, alloc)
	if kid := headerKID(t, fresh["default"].JWT); kid != rot.Key.KeyID {
		t.Errorf("after rotation, signed with %s, want %s", kid, rot.Key.KeyID)
	}

	// The identity with a ttl expires.
	clock.Advance(time.Hour)
	if _, err := s.VerifyIdentity(ids["vault"].JWT); structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired identity: %v", err)
	}

	// A stopped allocation's identity no longer verifies.
	if _, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{Namespace: "default", JobID: "web"}); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, "the alloc stopped", func(ws memdb.WatchSet) (bool, string) {
		_, _ = s.State().AllocByID(ws, alloc.ID) // wake on the alloc's changes
		_, err := s.VerifyIdentity(ids["default"].JWT)
		return structs.KindOf(err) == structs.KindPermission, "still verifies"
	})
}

func TestIdentityAuthorize(t *testing.T) {
	s := newTestServer(t, nil)
	node, alloc := placedAlloc(t, s)
	tok := signAll(t, s, node, alloc)["default"].JWT
	ctx := context.Background()
	for _, tc := range []struct {
		op    structs.WorkloadOp
		allow bool
	}{
		{structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/web"}, true},
		{structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Namespace: "default", Path: "nomad/jobs/web/web/app"}, true},
		{structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/db"}, false},
		{structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Namespace: "prod", Path: "nomad/jobs/web"}, false},
		{structs.WorkloadOp{Kind: structs.WorkloadOpServiceRead}, true},
		{structs.WorkloadOp{Kind: structs.WorkloadOpOther, Path: "PUT /v1/jobs"}, false},
	} {
		resp, err := s.IdentityAuthorize(ctx, &structs.IdentityAuthorizeRequest{Token: tok, Op: tc.op})
		if tc.allow && (err != nil || resp.Claims.JobID != "web") {
			t.Errorf("%s: %+v, %v; want allowed", tc.op, resp, err)
		}
		if !tc.allow && structs.KindOf(err) != structs.KindPermission {
			t.Errorf("%s: %v; want permission denied", tc.op, err)
		}
	}
}

func TestAuthorizeWorkload(t *testing.T) {
	claims := &structs.IdentityClaims{Namespace: "default", JobID: "web", Group: "g", Task: "t"}
	tests := []struct {
		name  string
		op    structs.WorkloadOp
		allow bool
	}{
		{"jobs root", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs"}, true},
		{"own job", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/web"}, true},
		{"own group", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/web/g"}, true},
		{"own task", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/web/g/t"}, true},
		{"other task", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/web/g/u"}, false},
		{"other job", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/webx"}, false},
		{"below own task", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "nomad/jobs/web/g/t/x"}, false},
		{"other namespace", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Namespace: "prod", Path: "nomad/jobs/web"}, false},
		{"outside nomad/jobs", structs.WorkloadOp{Kind: structs.WorkloadOpVariableRead, Path: "secret"}, false},
		{"list own namespace", structs.WorkloadOp{Kind: structs.WorkloadOpVariableList}, true},
		{"list other namespace", structs.WorkloadOp{Kind: structs.WorkloadOpVariableList, Namespace: "prod"}, false},
		{"services", structs.WorkloadOp{Kind: structs.WorkloadOpServiceRead, Namespace: "default"}, true},
		{"services elsewhere", structs.WorkloadOp{Kind: structs.WorkloadOpServiceRead, Namespace: "prod"}, false},
		{"job write", structs.WorkloadOp{Kind: structs.WorkloadOpOther, Path: "PUT /v1/jobs"}, false},
		{"unknown kind", structs.WorkloadOp{Kind: "variable-write", Path: "nomad/jobs/web"}, false},
	}
	for _, tt := range tests {
		err := authorizeWorkload(claims, tt.op)
		if (err == nil) != tt.allow {
			t.Errorf("%s: %v, allow %v", tt.name, err, tt.allow)
		}
		if err != nil && (structs.KindOf(err) != structs.KindPermission || !strings.HasPrefix(err.Error(), "Permission denied")) {
			t.Errorf("%s: %v is not a permission error", tt.name, err)
		}
	}
	if err := authorizeWorkload(nil, structs.WorkloadOp{Kind: structs.WorkloadOpServiceRead}); err == nil {
		t.Error("no claims allowed")
	}
}

// verifyWithKeys checks a JWT's signature as a third party holding the
// JWKS would.
func verifyWithKeys(t *testing.T, tok string, keys []*structs.KeyringPublicKey) bool {
	t.Helper()
	kid := headerKID(t, tok)
	parts := strings.Split(tok, ".")
	sig := must(base64.RawURLEncoding.DecodeString(parts[2]))
	for _, k := range keys {
		if k.KeyID == kid {
			return ed25519.Verify(k.PublicKey, []byte(parts[0]+"."+parts[1]), sig)
		}
	}
	return false
}

func headerKID(t *testing.T, tok string) string {
	t.Helper()
	var h struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(must(base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])), &h); err != nil || h.Alg != "EdDSA" {
		t.Fatalf("header of %s: %+v, %v", tok, h, err)
	}
	return h.Kid
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
