package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestGossipKeyringRotation rotates a single server's gossip key: install
// a new key, use it, remove the old; the keyring file follows, and is what
// a restart loads (over the configured key).
func TestGossipKeyringRotation(t *testing.T) {
	oldKey := []byte("0123456789abcdef0123456789abcdef")
	newKey := []byte("fedcba9876543210fedcba9876543210")
	oldB64, newB64 := base64.StdEncoding.EncodeToString(oldKey), base64.StdEncoding.EncodeToString(newKey)
	dir := t.TempDir()
	s := clusterServer(t, "s1", newTestStores(), func(c *Config) {
		c.Cluster.BootstrapExpect = 1
		c.Cluster.GossipKey = oldKey
		c.Cluster.SerfSnapshot = filepath.Join(dir, "local.snapshot")
	})
	ctx := context.Background()
	keys := func() map[string]int {
		t.Helper()
		r, err := s.GossipKeyringList(ctx, &structs.GossipKeyringListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Keys
	}
	if k := keys(); len(k) != 1 || k[oldB64] != 1 {
		t.Fatalf("keys at start: %v", k)
	}
	for _, op := range []string{structs.GossipKeyringInstall, structs.GossipKeyringUse, structs.GossipKeyringRemove} {
		key := newB64
		if op == structs.GossipKeyringRemove {
			key = oldB64
		}
		if _, err := s.GossipKeyringOp(ctx, &structs.GossipKeyringRequest{Op: op, Key: key}); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	if k := keys(); len(k) != 1 || k[newB64] != 1 {
		t.Fatalf("keys after the rotation: %v", k)
	}
	b, err := os.ReadFile(filepath.Join(dir, "serf.keyring"))
	if err != nil {
		t.Fatal(err)
	}
	var file []string
	if err := json.Unmarshal(b, &file); err != nil || len(file) != 1 || file[0] != newB64 {
		t.Fatalf("keyring file %s (%v)", b, err)
	}
	kr, err := loadGossipKeyring(filepath.Join(dir, "serf.keyring"), oldKey)
	if err != nil || string(kr.GetPrimaryKey()) != string(newKey) {
		t.Fatalf("a restart would not load the rotated key: %v", err)
	}

	for _, tc := range []struct {
		name string
		req  structs.GossipKeyringRequest
		want string
	}{
		{"not base64", structs.GossipKeyringRequest{Op: "install", Key: "nope!"}, "invalid gossip key"},
		{"wrong size", structs.GossipKeyringRequest{Op: "install", Key: base64.StdEncoding.EncodeToString([]byte("short"))}, "invalid gossip key"},
		{"unknown op", structs.GossipKeyringRequest{Op: "rotate", Key: newB64}, "unknown gossip keyring operation"},
		{"remove the key in use", structs.GossipKeyringRequest{Op: "remove", Key: newB64}, "gossip keyring"},
	} {
		if _, err := s.GossipKeyringOp(ctx, &tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadGossipKeyring(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.keyring")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadGossipKeyring(bad, nil); err == nil || !strings.Contains(err.Error(), "fix or delete it") {
		t.Fatalf("a corrupt keyring file: %v", err)
	}
	kr, err := loadGossipKeyring(filepath.Join(dir, "missing"), nil)
	if err != nil || kr != nil {
		t.Fatalf("no file and no key: %v, %v", kr, err)
	}
	kr, err = loadGossipKeyring(filepath.Join(dir, "missing"), []byte("0123456789abcdef"))
	if err != nil || string(kr.GetPrimaryKey()) != "0123456789abcdef" {
		t.Fatalf("no file, a configured key: %v", err)
	}
}

func TestGossipKeyringWithoutGossip(t *testing.T) {
	s := newTestServer(t, nil)
	if _, err := s.GossipKeyringList(context.Background(), &structs.GossipKeyringListRequest{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a server without gossip: %v", err)
	}
}

func TestGossipKeyringWithoutEncryption(t *testing.T) {
	s := clusterServer(t, "plain", newTestStores(), func(c *Config) { c.Cluster.BootstrapExpect = 1 })
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
	if _, err := s.GossipKeyringOp(context.Background(), &structs.GossipKeyringRequest{Op: "install", Key: key}); err == nil {
		t.Fatal("a key was installed on a server whose gossip is not encrypted")
	}
}
