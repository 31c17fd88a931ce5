package command

import (
	"strings"
	"testing"
	"time"
)

// TestParseNodePoolSpecIdentityTTL: a node pool file's node_identity_ttl
// (Nomad's attribute) is read as a duration; a bad one is refused with
// where it is.
func TestParseNodePoolSpecIdentityTTL(t *testing.T) {
	p, err := parseNodePoolSpec("pool.hcl", []byte("node_pool \"dev-1\" {\n  node_identity_ttl = \"720h\"\n}\n"))
	if err != nil || p.NodeIdentityTTL != 720*time.Hour {
		t.Fatalf("parsed %+v, %v: want a 720h TTL", p, err)
	}
	_, err = parseNodePoolSpec("pool.hcl", []byte("node_pool \"dev-1\" {\n  node_identity_ttl = \"soon\"\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "pool.hcl:2") || !strings.Contains(err.Error(), "node_identity_ttl") {
		t.Fatalf("bad TTL: %v, want an error at pool.hcl:2", err)
	}
}
