package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/structs"
)

// BenchmarkResolveACLCached measures a request's authorization with a
// warm cache: resolving its token and checking a namespace capability.
func BenchmarkResolveACLCached(b *testing.B) {
	s, err := NewServer(context.Background(), &Config{NodeName: "bench", ACLEnabled: true, NumWorkers: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Shutdown() })
	ctx := context.Background()
	if _, err := s.ACLPolicyUpsert(ctx, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "ro", Rules: `namespace "default" { policy = "read" }`}}}); err != nil {
		b.Fatal(err)
	}
	tok, err := s.ACLTokenUpsert(ctx, &structs.ACLTokenUpsertRequest{Token: &structs.ACLToken{Type: "client", Policies: []string{"ro"}}})
	if err != nil {
		b.Fatal(err)
	}
	req := acl.Namespace(acl.NamespaceCapabilityReadJob)
	b.ReportAllocs()
	for b.Loop() {
		a, _, err := s.ResolveACL(ctx, tok.Token.SecretID)
		if err != nil || !a.Allows(req, acl.Target{Namespace: "default"}) {
			b.Fatal("denied", err)
		}
	}
}
