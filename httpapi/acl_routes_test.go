package httpapi

import (
	"testing"
)

// TestEveryRouteDeclaresRequirement fails when a registered route has no
// ACL requirement: add it to buildRouteRequirements (acl_routes.go).
func TestEveryRouteDeclaresRequirement(t *testing.T) {
	s := New(nil, &Config{})
	rt := s.Handler().(*router)
	if len(rt.routes) < 50 {
		t.Fatalf("only %d routes registered: the walk is broken", len(rt.routes))
	}
	registered := map[string]bool{}
	for _, r := range rt.routes {
		registered[r] = true
		if !routeRequirements[r].Declared() {
			t.Errorf("route %q declares no ACL requirement: add it to buildRouteRequirements (httpapi/acl_routes.go)", r)
		}
	}
	for r := range routeRequirements {
		if !registered[r] {
			t.Errorf("requirement for %q, which is not a registered route: remove it", r)
		}
	}
}
