package client

import (
	"context"
	"encoding/base64"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TestNodeIdentityNeedsRenewal: a node asks for an identity when it has
// none, when an operator forced a renewal, and from half its lifetime on.
func TestNodeIdentityNeedsRenewal(t *testing.T) {
	issued := time.Unix(1_000_000, 0)
	held := func() *nodeIdentity {
		n := &nodeIdentity{}
		n.store(&structs.NodeSignIdentityResponse{JWT: "a.b.c", IssuedAt: issued.Unix(), Expiry: issued.Add(24 * time.Hour).Unix()})
		return n
	}
	forced := held()
	forced.force()
	cases := []struct {
		name string
		n    *nodeIdentity
		at   time.Time
		want bool
	}{
		{"none held", &nodeIdentity{}, issued, true},
		{"fresh", held(), issued.Add(time.Minute), false},
		{"just before half its life", held(), issued.Add(12*time.Hour - time.Second), false},
		{"at half its life", held(), issued.Add(12 * time.Hour), true},
		{"expired", held(), issued.Add(25 * time.Hour), true},
		{"forced", forced, issued.Add(time.Minute), true},
	}
	for _, tc := range cases {
		if got := tc.n.needsRenewal(tc.at); got != tc.want {
			t.Errorf("%s: needsRenewal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fakeSigner counts NodeSignIdentity calls and answers with a token whose
// payload names the node.
type fakeSigner struct {
	mu    sync.Mutex // guards the fields below
	calls int
	fail  error
}

func (f *fakeSigner) sign(_ context.Context, req *structs.NodeSignIdentityRequest) (*structs.NodeSignIdentityResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail != nil {
		return nil, f.fail
	}
	if req.SecretID != "s3cret" {
		return nil, structs.NewError(structs.KindPermission, "wrong secret")
	}
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"nomad_node_id":"` + req.NodeID + `","exp":2000}`))
	return &structs.NodeSignIdentityResponse{JWT: "eyJhbGciOiJFZERTQSJ9." + payload + ".sig", IssuedAt: 1000, Expiry: 2000}, nil
}

func (f *fakeSigner) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// TestRenewIdentity: the client asks the servers with its secret only
// when it needs a new identity, keeps the one it has when they fail,
// serves the claims of the one it holds, and renews on demand.
func TestRenewIdentity(t *testing.T) {
	now := time.Unix(1000, 0)
	f := &fakeSigner{}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NodeSignIdentity, f.sign)
	c := &Client{
		now: func() time.Time { return now }, ctx: t.Context(), rpc: h,
		node: &structs.Node{ID: "n1", SecretID: "s3cret"}, logger: slog.New(slog.DiscardHandler),
	}

	// None yet: a read waits, and gives up when its context ends.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.NodeIdentityClaims(ctx); structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("claims before any identity: %v, want unavailable", err)
	}

	c.renewIdentity()
	claims, err := c.NodeIdentityClaims(t.Context())
	if err != nil || claims["nomad_node_id"] != "n1" || f.count() != 1 {
		t.Fatalf("claims %v, %v after %d calls: want node n1's after one", claims, err, f.count())
	}
	c.renewIdentity() // fresh: no call
	if f.count() != 1 {
		t.Fatalf("%d calls: a fresh identity was renewed", f.count())
	}
	now = time.Unix(1500, 0) // half its life
	f.mu.Lock()
	f.fail = structs.NewError(structs.KindUnavailable, "no leader")
	f.mu.Unlock()
	c.renewIdentity()
	if f.count() != 2 {
		t.Fatalf("%d calls: want a renewal at half its life", f.count())
	}
	if claims, err := c.NodeIdentityClaims(t.Context()); err != nil || claims["nomad_node_id"] != "n1" {
		t.Fatalf("after a failed renewal: %v, %v, want the identity held", claims, err)
	}
	f.mu.Lock()
	f.fail = nil
	f.mu.Unlock()
	now = time.Unix(1001, 0)
	c.identity.store(&structs.NodeSignIdentityResponse{JWT: "x.e30.y", IssuedAt: 1000, Expiry: 2000})
	c.RenewNodeIdentity()
	c.renewIdentity()
	if f.count() != 3 {
		t.Fatalf("%d calls: want a forced renewal", f.count())
	}
	c.renewIdentity()
	if f.count() != 3 {
		t.Fatalf("%d calls: the forced renewal was not cleared", f.count())
	}
}

// TestJWTClaims: a JWT's payload is decoded; what is not one is refused.
func TestJWTClaims(t *testing.T) {
	if c, err := jwtClaims("h." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"x"}`)) + ".s"); err != nil || c["sub"] != "x" {
		t.Fatalf("claims %v, %v", c, err)
	}
	for _, bad := range []string{"", "a.b", "a.!!.c", "a." + base64.RawURLEncoding.EncodeToString([]byte("[1]")) + ".c"} {
		if _, err := jwtClaims(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
