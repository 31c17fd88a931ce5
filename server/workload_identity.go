package server

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
)

// Workload identities are JWTs (RFC 7519) signed with EdDSA (RFC 8037):
// the header names the root key whose derived signing key signed them
// ("kid"), so that every server, and anyone holding the cluster's JWKS,
// verifies them, and a rotated keyring keeps verifying what the former key
// signed until that key is removed.

// jwtHeader is a workload identity's JOSE header.
type jwtHeader struct {
	Alg   string `json:"alg"`
	KeyID string `json:"kid"`
	Type  string `json:"typ"`
}

// AllocSignIdentities signs the identities of a task of one of the
// calling node's allocations, with the keyring's active key. An
// allocation of another node, or one the servers stopped, gets none.
func (s *Server) AllocSignIdentities(ctx context.Context, req *structs.AllocSignIdentitiesRequest) (*structs.AllocSignIdentitiesResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.NodeID == "" {
		return nil, structs.Invalid("missing node ID")
	}
	if _, err := s.authNode(req.NodeID, req.SecretID); err != nil {
		return nil, err
	}
	alloc, err := s.fsm.State().AllocByID(nil, req.AllocID)
	if err != nil {
		return nil, fmt.Errorf("read alloc %q: %w", req.AllocID, err)
	}
	switch {
	case alloc == nil:
		return nil, structs.NotFound("allocation", req.AllocID)
	case alloc.NodeID != req.NodeID:
		return nil, permissionDenied("node %q may not sign identities for alloc %q: it is placed on another node", req.NodeID, req.AllocID)
	case alloc.ServerTerminalStatus():
		return nil, structs.Invalid("allocation %s is stopped: its tasks get no new identities", req.AllocID)
	}
	var task *structs.Task
	if alloc.Job != nil {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			task = tg.LookupTask(req.Task)
		}
	}
	if task == nil {
		return nil, structs.NotFound("task", req.Task)
	}
	key, err := s.activeRootKey()
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	resp := &structs.AllocSignIdentitiesResponse{}
	for _, id := range structs.TaskIdentities(task) {
		name := id.IdentityName()
		if len(req.Identities) > 0 && !slices.Contains(req.Identities, name) {
			continue
		}
		claims := s.identityClaims(alloc, task.Name, id, now)
		jwt, err := s.signIdentity(key, claims)
		if err != nil {
			return nil, fmt.Errorf("sign identity %q of task %q: %w", name, task.Name, err)
		}
		resp.Identities = append(resp.Identities, &structs.SignedIdentity{Name: name, JWT: jwt, Expiry: claims.Expiry})
	}
	return resp, nil
}

// identityClaims returns the claims of identity id of a task of alloc,
// issued at now.
func (s *Server) identityClaims(alloc *structs.Allocation, task string, id *structs.TaskIdentity, now time.Time) *structs.IdentityClaims {
	aud := id.Audience
	if len(aud) == 0 && id.IdentityName() == structs.DefaultIdentityName {
		aud = []string{structs.DefaultIdentityAudience}
	}
	c := &structs.IdentityClaims{
		Namespace:    alloc.Namespace,
		JobID:        alloc.JobID,
		AllocationID: alloc.ID,
		Task:         task,
		Group:        alloc.TaskGroup,
		IdentityName: id.IdentityName(),
		Subject:      structs.IdentitySubject(s.config.Region, alloc.Namespace, alloc.JobID, alloc.TaskGroup, task, id.IdentityName()),
		Audience:     aud,
		IssuedAt:     now.Unix(),
		NotBefore:    now.Unix(),
		JTI:          structs.GenerateUUID(),
	}
	if id.TTL > 0 {
		c.Expiry = now.Add(id.TTL).Unix()
	}
	return c
}

// signIdentity returns claims (a workload's, a client introduction's) as
// a JWT signed with root key key.
func (s *Server) signIdentity(key *structs.RootKey, claims any) (string, error) {
	h, err := json.Marshal(jwtHeader{Alg: structs.IdentityAlgorithm, KeyID: key.KeyID, Type: "JWT"})
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signingInput := b64(h) + "." + b64(p)
	sig, err := s.keyring.Sign(key, []byte(signingInput))
	if err != nil {
		return "", err
	}
	return signingInput + "." + b64(sig), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// VerifyIdentity checks a workload identity: its shape, its signature by
// a root key of the keyring, its times, and that the allocation it names
// still exists and is not stopped; it returns its claims. Every failure is
// a KindPermission error saying why.
func (s *Server) VerifyIdentity(token string) (*structs.IdentityClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, permissionDenied("the token is not a workload identity (a JWT has three parts separated by dots)")
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, permissionDenied("the workload identity's header is not base64url: %v", err)
	}
	var h jwtHeader
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, permissionDenied("the workload identity's header is not JSON: %v", err)
	}
	if h.Alg != structs.IdentityAlgorithm {
		return nil, permissionDenied("the workload identity is signed with %q: only %q is accepted", h.Alg, structs.IdentityAlgorithm)
	}
	key, err := s.fsm.State().RootKeyByID(nil, h.KeyID)
	if err != nil {
		return nil, fmt.Errorf("read root key %q: %w", h.KeyID, err)
	}
	if key == nil {
		return nil, permissionDenied("the workload identity is signed with key %q, which the keyring does not hold (removed?)", h.KeyID)
	}
	pub, err := s.keyring.PublicKey(key)
	if err != nil {
		return nil, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !ed25519.Verify(pub, []byte(parts[0]+"."+parts[1]), sig) {
		return nil, permissionDenied("the workload identity's signature does not verify")
	}
	pb, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, permissionDenied("the workload identity's claims are not base64url: %v", err)
	}
	var claims structs.IdentityClaims
	if err := json.Unmarshal(pb, &claims); err != nil {
		return nil, permissionDenied("the workload identity's claims are not JSON: %v", err)
	}
	if err := claims.CheckTime(s.clock.Now()); err != nil {
		return nil, err
	}
	alloc, err := s.fsm.State().AllocByID(nil, claims.AllocationID)
	if err != nil {
		return nil, fmt.Errorf("read alloc %q: %w", claims.AllocationID, err)
	}
	if alloc == nil || alloc.TerminalStatus() {
		return nil, permissionDenied("the workload identity's allocation %q is stopped or gone", claims.AllocationID)
	}
	if alloc.Namespace != claims.Namespace || alloc.JobID != claims.JobID {
		return nil, permissionDenied("the workload identity names job %q in namespace %q, but its allocation %q belongs to another", claims.JobID, claims.Namespace, claims.AllocationID)
	}
	// The group comes from the allocation, not from the token.
	claims.Group = alloc.TaskGroup
	return &claims, nil
}

// IdentityAuthorize verifies a workload identity and checks that it may
// do the request's operation (authorizeWorkload).
func (s *Server) IdentityAuthorize(ctx context.Context, req *structs.IdentityAuthorizeRequest) (*structs.IdentityAuthorizeResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, structs.Invalid("missing request")
	}
	claims, err := s.VerifyIdentity(req.Token)
	if err != nil {
		return nil, err
	}
	if err := authorizeWorkload(claims, req.Op); err != nil {
		return nil, err
	}
	return &structs.IdentityAuthorizeResponse{Claims: claims}, nil
}
