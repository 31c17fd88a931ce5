package acl

import (
	"slices"
	"strings"
)

// ACL is the compiled, merged form of a token's policies: what it may do.
// It is immutable once built and safe for concurrent use.
type ACL struct {
	management bool
	// namespaces holds the rules by exact name, globs their glob rules.
	namespaces map[string]*nsGrant
	globs      []*nsGrant
	hostVols   map[string]capSet
	hostGlobs  []globCaps
	node       string
	agent      string
	operator   string
	quota      string
	plugin     string
}

type capSet map[string]bool

type globCaps struct {
	pattern string
	caps    capSet
}

// nsGrant is the merged grant of one namespace name or glob.
type nsGrant struct {
	pattern string
	caps    capSet
	// vars: variables path patterns to their capabilities.
	vars map[string]capSet
}

// ManagementACL returns the ACL of a management token: everything is
// allowed.
func ManagementACL() *ACL { return &ACL{management: true} }

// New merges policies into one ACL: capabilities add up, a deny in any of
// them wins, and for the coarse rules the strongest level wins unless one
// denies.
func New(policies ...*Policy) *ACL {
	a := &ACL{namespaces: map[string]*nsGrant{}, hostVols: map[string]capSet{}}
	for _, p := range policies {
		if p == nil {
			continue
		}
		for _, r := range p.Namespaces {
			g := a.namespaces[r.Name]
			if g == nil {
				g = &nsGrant{pattern: r.Name, caps: capSet{}, vars: map[string]capSet{}}
				a.namespaces[r.Name] = g
			}
			for _, c := range r.Capabilities {
				g.caps[c] = true
			}
			if vc := expandNamespaceVariables(r.Policy); vc != nil {
				addCaps(g.vars, "*", vc)
			}
			for _, v := range r.Variables {
				addCaps(g.vars, v.Path, v.Capabilities)
			}
		}
		for _, r := range p.HostVolumes {
			cs := a.hostVols[r.Name]
			if cs == nil {
				cs = capSet{}
				a.hostVols[r.Name] = cs
			}
			for _, c := range r.Capabilities {
				cs[c] = true
			}
		}
		a.node = mergeLevel(a.node, p.Node)
		a.agent = mergeLevel(a.agent, p.Agent)
		a.operator = mergeLevel(a.operator, p.Operator)
		a.quota = mergeLevel(a.quota, p.Quota)
		a.plugin = mergeLevel(a.plugin, p.Plugin)
	}
	for name, g := range a.namespaces {
		if strings.Contains(name, "*") {
			a.globs = append(a.globs, g)
			delete(a.namespaces, name)
		}
	}
	for name, cs := range a.hostVols {
		if strings.Contains(name, "*") {
			a.hostGlobs = append(a.hostGlobs, globCaps{pattern: name, caps: cs})
			delete(a.hostVols, name)
		}
	}
	// A stable order, so that ties between globs resolve the same way.
	slices.SortFunc(a.globs, func(x, y *nsGrant) int { return strings.Compare(x.pattern, y.pattern) })
	slices.SortFunc(a.hostGlobs, func(x, y globCaps) int { return strings.Compare(x.pattern, y.pattern) })
	return a
}

func addCaps(m map[string]capSet, key string, caps []string) {
	cs := m[key]
	if cs == nil {
		cs = capSet{}
		m[key] = cs
	}
	for _, c := range caps {
		cs[c] = true
	}
}

// levelRank orders the coarse levels: deny wins over everything, then the
// strongest grant.
func levelRank(l string) int {
	switch l {
	case PolicyDeny:
		return 100
	case PolicyWrite:
		return 3
	case PolicyList:
		return 2
	case PolicyRead:
		return 1
	}
	return 0
}

func mergeLevel(have, add string) string {
	if levelRank(add) > levelRank(have) {
		return add
	}
	return have
}

// IsManagement reports whether the ACL is a management token's.
func (a *ACL) IsManagement() bool { return a != nil && a.management }

// globMatch reports whether name matches pattern, whose * matches any run
// of characters (none included).
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	rest := name[len(parts[0]):]
	for i, part := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(rest, part)
		}
		idx := strings.Index(rest, part)
		if idx < 0 {
			return false
		}
		rest = rest[idx+len(part):]
	}
	return true
}

// specificity ranks the glob patterns that match one name: the one with the
// most literal characters is the closest match.
func specificity(pattern string) int { return len(pattern) - strings.Count(pattern, "*") }

// namespaceGrant returns the grant that applies to ns: its exact rule, or
// the most specific matching glob.
func (a *ACL) namespaceGrant(ns string) *nsGrant {
	if g, ok := a.namespaces[ns]; ok {
		return g
	}
	var best *nsGrant
	for _, g := range a.globs {
		if globMatch(g.pattern, ns) && (best == nil || specificity(g.pattern) > specificity(best.pattern)) {
			best = g
		}
	}
	return best
}

// AllowNamespaceOperation reports whether the ACL grants capability op in
// namespace ns.
func (a *ACL) AllowNamespaceOperation(ns, op string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	g := a.namespaceGrant(ns)
	if g == nil || g.caps[NamespaceCapabilityDeny] {
		return false
	}
	return g.caps[op]
}

// AllowNamespace reports whether the ACL grants anything in namespace ns
// (what a listing of namespaces shows).
func (a *ACL) AllowNamespace(ns string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	g := a.namespaceGrant(ns)
	if g == nil || g.caps[NamespaceCapabilityDeny] {
		return false
	}
	if len(g.caps) > 0 {
		return true
	}
	for _, cs := range g.vars {
		if len(cs) > 0 && !cs[VariablesCapabilityDeny] {
			return true
		}
	}
	return false
}

// AllowNamespaceOperationAny reports whether the ACL grants op in some
// namespace: a list across every namespace ("*") is allowed then, and
// filtered to the namespaces where it holds.
func (a *ACL) AllowNamespaceOperationAny(op string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	for _, g := range a.namespaces {
		if !g.caps[NamespaceCapabilityDeny] && g.caps[op] {
			return true
		}
	}
	for _, g := range a.globs {
		if !g.caps[NamespaceCapabilityDeny] && g.caps[op] {
			return true
		}
	}
	return false
}

// AllowVariableOperation reports whether the ACL grants op (read, write,
// list, destroy) on the variable at path in namespace ns: the most
// specific path rule decides, and a deny in it refuses.
func (a *ACL) AllowVariableOperation(ns, path, op string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	g := a.namespaceGrant(ns)
	if g == nil || g.caps[NamespaceCapabilityDeny] {
		return false
	}
	var (
		best  capSet
		bestP string
		found bool
	)
	for p, cs := range g.vars {
		if !globMatch(p, path) {
			continue
		}
		if !found || specificity(p) > specificity(bestP) || (specificity(p) == specificity(bestP) && p < bestP) {
			best, bestP, found = cs, p, true
		}
	}
	if !found || best[VariablesCapabilityDeny] {
		return false
	}
	return best[op]
}

// AllowVariableOperationAny reports whether the ACL grants op on some
// variable path of namespace ns ("" or "*": of any namespace).
func (a *ACL) AllowVariableOperationAny(ns, op string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	grants := []*nsGrant{}
	if ns == "" || ns == "*" {
		for _, g := range a.namespaces {
			grants = append(grants, g)
		}
		grants = append(grants, a.globs...)
	} else if g := a.namespaceGrant(ns); g != nil {
		grants = append(grants, g)
	}
	for _, g := range grants {
		if g.caps[NamespaceCapabilityDeny] {
			continue
		}
		for _, cs := range g.vars {
			if cs[op] && !cs[VariablesCapabilityDeny] {
				return true
			}
		}
	}
	return false
}

// AllowHostVolumeOperation reports whether the ACL grants op on the host
// volume named name.
func (a *ACL) AllowHostVolumeOperation(name, op string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	cs, ok := a.hostVols[name]
	if !ok {
		best := ""
		for _, g := range a.hostGlobs {
			if globMatch(g.pattern, name) && (cs == nil || specificity(g.pattern) > specificity(best)) {
				cs, best = g.caps, g.pattern
			}
		}
	}
	if cs == nil || cs[HostVolumeCapabilityDeny] {
		return false
	}
	return cs[op]
}

func allowRead(a *ACL, level string) bool {
	if a == nil {
		return false
	}
	return a.management || level == PolicyRead || level == PolicyWrite || level == PolicyList
}

func allowWrite(a *ACL, level string) bool {
	if a == nil {
		return false
	}
	return a.management || level == PolicyWrite
}

// AllowNodeRead reports whether the ACL may read nodes.
func (a *ACL) AllowNodeRead() bool {
	return allowRead(a, a.level(func(a *ACL) string { return a.node }))
}

// AllowNodeWrite reports whether the ACL may change nodes (drain,
// eligibility, GC).
func (a *ACL) AllowNodeWrite() bool {
	return allowWrite(a, a.level(func(a *ACL) string { return a.node }))
}

// AllowAgentRead reports whether the ACL may read the agent's state.
func (a *ACL) AllowAgentRead() bool {
	return allowRead(a, a.level(func(a *ACL) string { return a.agent }))
}

// AllowAgentWrite reports whether the ACL may change the agent (join,
// force-leave, keyring).
func (a *ACL) AllowAgentWrite() bool {
	return allowWrite(a, a.level(func(a *ACL) string { return a.agent }))
}

// AllowOperatorRead reports whether the ACL may read the cluster's
// operator state (raft, autopilot, scheduler configuration).
func (a *ACL) AllowOperatorRead() bool {
	return allowRead(a, a.level(func(a *ACL) string { return a.operator }))
}

// AllowOperatorWrite reports whether the ACL may change the cluster's
// operator state.
func (a *ACL) AllowOperatorWrite() bool {
	return allowWrite(a, a.level(func(a *ACL) string { return a.operator }))
}

// AllowQuotaRead reports whether the ACL may read quotas.
func (a *ACL) AllowQuotaRead() bool {
	return allowRead(a, a.level(func(a *ACL) string { return a.quota }))
}

// AllowQuotaWrite reports whether the ACL may change quotas.
func (a *ACL) AllowQuotaWrite() bool {
	return allowWrite(a, a.level(func(a *ACL) string { return a.quota }))
}

// AllowPluginRead reports whether the ACL may read plugins.
func (a *ACL) AllowPluginRead() bool {
	l := a.level(func(a *ACL) string { return a.plugin })
	return a != nil && (a.management || l == PolicyRead)
}

// AllowPluginList reports whether the ACL may list plugins.
func (a *ACL) AllowPluginList() bool {
	l := a.level(func(a *ACL) string { return a.plugin })
	return a != nil && (a.management || l == PolicyRead || l == PolicyList)
}

func (a *ACL) level(f func(*ACL) string) string {
	if a == nil {
		return ""
	}
	return f(a)
}
