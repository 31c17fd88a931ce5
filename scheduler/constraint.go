package scheduler

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"

	goversion "github.com/hashicorp/go-version"

	"github.com/drover-io/drover/structs"
)

// resolveTarget returns the value a constraint target names on node, and
// whether it is set, as Nomad resolves it: a target that does not start
// with "${" is a literal; ${node.unique.id}, ${node.unique.name},
// ${node.datacenter}, ${node.class} and ${node.pool} are always set (an
// empty class is the empty string); ${attr.K} and ${meta.K} are set when
// the node has K; anything else is unset.
func resolveTarget(target string, node *structs.Node) (string, bool) {
	if !strings.HasPrefix(target, "${") {
		return target, true
	}
	switch target {
	case "${node.unique.id}":
		return node.ID, true
	case "${node.unique.name}":
		return node.Name, true
	case "${node.datacenter}":
		return node.Datacenter, true
	case "${node.class}":
		return node.NodeClass, true
	case "${node.pool}":
		return structs.NodePoolOf(node), true
	}
	ref := strings.TrimSuffix(target[2:], "}")
	if k, ok := strings.CutPrefix(ref, "attr."); ok {
		v, ok := node.Attributes[k]
		return v, ok
	}
	if k, ok := strings.CutPrefix(ref, "meta."); ok {
		v, ok := node.Meta[k]
		return v, ok
	}
	return "", false
}

// constraintChecker evaluates constraints against nodes, caching compiled
// regular expressions and version constraints for one evaluation.
type constraintChecker struct {
	regexps  map[string]*regexp.Regexp
	versions map[string]goversion.Constraints // nil: invalid
}

func newConstraintChecker() *constraintChecker {
	return &constraintChecker{regexps: map[string]*regexp.Regexp{}, versions: map[string]goversion.Constraints{}}
}

// meets reports whether node satisfies c, with Nomad's semantics for
// each operator. distinct_hosts and distinct_property are placement-time
// constraints (scheduler.go, distinct_property.go) and always pass here.
func (cc *constraintChecker) meets(c *structs.Constraint, node *structs.Node) bool {
	lv, lok := resolveTarget(c.LTarget, node)
	rv, rok := resolveTarget(c.RTarget, node)
	switch c.Operand {
	case structs.ConstraintDistinctHosts, structs.ConstraintDistinctProperty:
		return true
	case structs.ConstraintAttributeIsSet:
		return lok
	case structs.ConstraintAttributeNotSet:
		return !lok
	case "", structs.ConstraintEqual, "==", "is":
		return lok && rok && lv == rv
	case structs.ConstraintNotEqual, "not":
		// Unset differs from every value, and unset equals unset.
		return lok != rok || lv != rv
	}
	if !lok || !rok {
		return false
	}
	switch c.Operand {
	case structs.ConstraintLessThan, structs.ConstraintLessEqual, structs.ConstraintGreaterThan, structs.ConstraintGreaterEqual:
		return compareOrdered(c.Operand, lv, rv)
	case structs.ConstraintRegex:
		re, ok := cc.regexps[rv]
		if !ok {
			var err error
			if re, err = regexp.Compile(rv); err != nil {
				re = nil
			}
			cc.regexps[rv] = re
		}
		return re != nil && re.MatchString(lv)
	case structs.ConstraintVersion:
		return cc.versionMatches(lv, rv)
	case structs.ConstraintSemver:
		return semverMatches(lv, rv)
	case structs.ConstraintSetContains, structs.ConstraintSetContainsAll:
		return setContains(lv, rv, true)
	case structs.ConstraintSetContainsAny:
		return setContains(lv, rv, false)
	}
	return false
}

// compareOrdered compares as integers when both sides are integers, else
// as numbers when both are numbers, else as strings.
func compareOrdered(op, l, r string) bool {
	if li, err := strconv.ParseInt(l, 10, 64); err == nil {
		if ri, err := strconv.ParseInt(r, 10, 64); err == nil {
			return cmpSatisfies(op, cmp.Compare(li, ri))
		}
	}
	if lf, err := strconv.ParseFloat(l, 64); err == nil {
		if rf, err := strconv.ParseFloat(r, 64); err == nil {
			return cmpSatisfies(op, cmp.Compare(lf, rf))
		}
	}
	return cmpSatisfies(op, strings.Compare(l, r))
}

func cmpSatisfies(op string, cmp int) bool {
	switch op {
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	case "=", "==", "":
		return cmp == 0
	case "!=":
		return cmp != 0
	}
	return false
}

// setItems splits a comma-separated list, trimming each item.
func setItems(s string) []string {
	items := strings.Split(s, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
	}
	return items
}

// setContains reports whether the comma-separated list l holds all (or,
// with all false, any) of the items of r.
func setContains(l, r string, all bool) bool {
	have := map[string]bool{}
	for _, it := range setItems(l) {
		have[it] = true
	}
	for _, it := range setItems(r) {
		if have[it] && !all {
			return true
		}
		if !have[it] && all {
			return false
		}
	}
	return all
}

// versionMatches reports whether v satisfies the version constraint c
// (">= 1.2, < 2", "~> 1.4"), with hashicorp/go-version's rules as Nomad
// uses them: a prerelease version ("1.6.0-beta", and so "6.1.0-18-amd64")
// satisfies only constraints that name a prerelease of the same version.
func (cc *constraintChecker) versionMatches(v, c string) bool {
	parsed, ok := cc.versions[c]
	if !ok {
		var err error
		if parsed, err = goversion.NewConstraint(c); err != nil {
			parsed = nil
		}
		cc.versions[c] = parsed
	}
	return constraintsMatch(v, parsed)
}

// versionMatches is constraintChecker.versionMatches without the cache.
func versionMatches(v, c string) bool {
	parsed, err := goversion.NewConstraint(c)
	return err == nil && constraintsMatch(v, parsed)
}

func constraintsMatch(v string, c goversion.Constraints) bool {
	if c == nil {
		return false
	}
	ver, err := goversion.NewVersion(strings.TrimSpace(v))
	return err == nil && c.Check(ver)
}

// semverMatches reports whether v satisfies every comma-separated clause
// of c, each an operator (=, !=, >, >=, <, <=; none means =) and a
// semantic version. Unlike version, prereleases are ordered by the
// Semantic Versioning rules and may satisfy any clause ("1.7.0-beta" is
// >= 1.6.0); there is no pessimistic operator.
func semverMatches(v, c string) bool {
	ver, err := goversion.NewSemver(strings.TrimSpace(v))
	if err != nil {
		return false
	}
	for _, clause := range strings.Split(c, ",") {
		clause = strings.TrimSpace(clause)
		op := "="
		for _, candidate := range []string{">=", "<=", "!=", ">", "<", "="} {
			if rest, ok := strings.CutPrefix(clause, candidate); ok {
				op, clause = candidate, strings.TrimSpace(rest)
				break
			}
		}
		want, err := goversion.NewSemver(clause)
		if err != nil {
			return false
		}
		if !cmpSatisfies(op, ver.Compare(want)) {
			return false
		}
	}
	return true
}
