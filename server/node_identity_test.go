package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestNodeSignIdentity: a node gets, with its secret only, a JWT signed
// by the keyring (verifiable with the published keys) whose claims name
// it as Nomad's node identities do, expiring after its pool's
// NodeIdentityTTL, or after the default in a pool that sets none.
func TestNodeSignIdentity(t *testing.T) {
	clock := &fakeClock{now: time.Now()}
	s := newTestServer(t, func(c *Config) { c.Clock = clock; c.Region = "global" })
	ctx := context.Background()
	node := testNode("n1", 4000, 4096)
	node.Datacenter = "dc1"
	registerNode(t, s, node)

	for name, req := range map[string]*structs.NodeSignIdentityRequest{
		"no secret":    {NodeID: node.ID},
		"wrong secret": {NodeID: node.ID, SecretID: "nope"},
	} {
		if _, err := s.NodeSignIdentity(ctx, req); structs.KindOf(err) != structs.KindPermission {
			t.Errorf("%s: %v, want permission denied", name, err)
		}
	}
	if _, err := s.NodeSignIdentity(ctx, &structs.NodeSignIdentityRequest{NodeID: "unknown", SecretID: "x"}); structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("unknown node: %v, want not found", err)
	}

	resp, err := s.NodeSignIdentity(ctx, &structs.NodeSignIdentityRequest{NodeID: node.ID, SecretID: node.SecretID})
	if err != nil {
		t.Fatalf("NodeSignIdentity: %v", err)
	}
	now := clock.Now().Unix()
	if resp.IssuedAt != now || resp.Expiry != clock.Now().Add(structs.DefaultNodeIdentityTTL).Unix() {
		t.Errorf("issued %d expiry %d, want %d and the default TTL later", resp.IssuedAt, resp.Expiry, now)
	}
	pubs, err := s.KeyringPublicKeys(ctx, &structs.KeyringPublicKeysRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !verifyWithKeys(t, resp.JWT, pubs.PublicKeys) {
		t.Error("the node identity does not verify with the published public keys")
	}
	claims := map[string]any{}
	if err := json.Unmarshal(must(base64.RawURLEncoding.DecodeString(strings.Split(resp.JWT, ".")[1])), &claims); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"nomad_node_id": node.ID, "nomad_node_pool": "default", "nomad_node_datacenter": "dc1",
		"sub": "node:global:default:" + node.ID + ":default", "aud": []any{"nomadproject.io"},
		"iat": float64(now), "nbf": float64(now), "exp": float64(resp.Expiry),
	}
	if _, ok := claims["jti"].(string); !ok {
		t.Errorf("claims %v lack a jti", claims)
	}
	delete(claims, "jti")
	if got, _ := json.Marshal(claims); string(got) != string(must(json.Marshal(want))) {
		t.Errorf("claims\n got %s\nwant %s", got, must(json.Marshal(want)))
	}

	// A node of a pool with a TTL of its own; its class is claimed.
	if _, err := s.NodePoolUpsert(ctx, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{
		{Name: "short", NodeIdentityTTL: time.Hour}}}); err != nil {
		t.Fatal(err)
	}
	pooled := testNode("n2", 4000, 4096)
	pooled.NodePool, pooled.NodeClass = "short", "gpu"
	registerNode(t, s, pooled)
	resp, err = s.NodeSignIdentity(ctx, &structs.NodeSignIdentityRequest{NodeID: pooled.ID, SecretID: pooled.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Expiry != clock.Now().Add(time.Hour).Unix() {
		t.Errorf("expiry %d, want the pool's hour", resp.Expiry)
	}
	claims = map[string]any{}
	if err := json.Unmarshal(must(base64.RawURLEncoding.DecodeString(strings.Split(resp.JWT, ".")[1])), &claims); err != nil {
		t.Fatal(err)
	}
	if claims["nomad_node_class"] != "gpu" || claims["nomad_node_pool"] != "short" {
		t.Errorf("claims %v, want class gpu in pool short", claims)
	}
}

// TestNodePoolIdentityTTL: a pool keeps its NodeIdentityTTL; a negative
// one is refused.
func TestNodePoolIdentityTTL(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	if _, err := s.NodePoolUpsert(ctx, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{
		{Name: "bad", NodeIdentityTTL: -time.Hour}}}); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("negative TTL: %v, want invalid", err)
	}
	if _, err := s.NodePoolUpsert(ctx, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{
		{Name: "dev-1", NodeIdentityTTL: 720 * time.Hour}}}); err != nil {
		t.Fatal(err)
	}
	p, err := s.fsm.State().NodePoolByName(nil, "dev-1")
	if err != nil || p == nil || p.NodeIdentityTTL != 720*time.Hour {
		t.Fatalf("stored pool %+v, %v: want its 720h TTL", p, err)
	}
}
