package httpapi

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryRouteDeclaresRequirement fails when a registered route has no
// ACL requirement: add it to buildRouteRequirements (acl_routes.go).
func TestEveryRouteDeclaresRequirement(t *testing.T) {
	s := New(nil, &Config{})
	rt := s.routes()
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

// TestACLDocTable fails when docs/acl.md's endpoint table differs from
// the declared requirements.
func TestACLDocTable(t *testing.T) {
	b, err := os.ReadFile("../docs/acl.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| ([A-Z, ]+) \\| `([^`]+)` \\| (.+) \\|$")
	documented := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, meth := range strings.Split(m[1], ", ") {
			documented[meth+" "+m[2]] = m[3]
		}
	}
	for route, r := range routeRequirements {
		if got, ok := documented[route]; !ok || got != r.String() {
			t.Errorf("docs/acl.md: %s documented as %q, declared %q", route, got, r.String())
		}
	}
	for route := range documented {
		if _, ok := routeRequirements[route]; !ok {
			t.Errorf("docs/acl.md documents %s, which declares no requirement", route)
		}
	}
}
