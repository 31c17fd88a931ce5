package scheduler

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/drover-io/drover/structs"
)

// resolveTarget returns the value a constraint target names on node, and
// whether it is set. A target without ${...} is a literal.
func resolveTarget(target string, node *structs.Node) (string, bool) {
	if !strings.HasPrefix(target, "${") || !strings.HasSuffix(target, "}") {
		return target, true
	}
	ref := target[2 : len(target)-1]
	switch ref {
	case "node.unique.id":
		return node.ID, true
	case "node.unique.name":
		return node.Name, true
	case "node.datacenter":
		return node.Datacenter, true
	case "node.class":
		return node.NodeClass, node.NodeClass != ""
	case "node.pool":
		return node.NodePool, node.NodePool != ""
	}
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
	regexps map[string]*regexp.Regexp
}

func newConstraintChecker() *constraintChecker {
	return &constraintChecker{regexps: map[string]*regexp.Regexp{}}
}

// meets reports whether node satisfies c. distinct_hosts and
// distinct_property are placement-time constraints and always pass here.
func (cc *constraintChecker) meets(c *structs.Constraint, node *structs.Node) bool {
	lv, lok := resolveTarget(c.LTarget, node)
	rv, rok := resolveTarget(c.RTarget, node)
	switch c.Operand {
	case structs.ConstraintDistinctHosts, "distinct_property":
		return true
	case structs.ConstraintAttributeIsSet:
		return lok
	case structs.ConstraintAttributeNotSet:
		return !lok
	case "", structs.ConstraintEqual, "==", "is":
		return lok && rok && lv == rv
	case structs.ConstraintNotEqual, "not":
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
	case structs.ConstraintVersion, "semver":
		return versionMatches(lv, rv)
	case structs.ConstraintSetContains, "set_contains_all":
		return setContains(lv, rv, true)
	case "set_contains_any":
		return setContains(lv, rv, false)
	}
	return false
}

// compareOrdered compares numerically when both sides are numbers, else as
// strings.
func compareOrdered(op, l, r string) bool {
	var cmp int
	lf, lerr := strconv.ParseFloat(l, 64)
	rf, rerr := strconv.ParseFloat(r, 64)
	switch {
	case lerr == nil && rerr == nil:
		switch {
		case lf < rf:
			cmp = -1
		case lf > rf:
			cmp = 1
		}
	default:
		cmp = strings.Compare(l, r)
	}
	return cmpSatisfies(op, cmp)
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

func splitSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out[p] = true
		}
	}
	return out
}

// setContains reports whether the comma-separated list l holds all (or,
// with all false, any) of the values in r.
func setContains(l, r string, all bool) bool {
	have := splitSet(l)
	want := splitSet(r)
	for v := range want {
		if have[v] && !all {
			return true
		}
		if !have[v] && all {
			return false
		}
	}
	return all
}

// versionMatches reports whether version v satisfies every comma-separated
// clause of constraint, such as ">= 1.2.0, < 2".
func versionMatches(v, constraint string) bool {
	have, ok := parseVersion(v)
	if !ok {
		return false
	}
	for _, clause := range strings.Split(constraint, ",") {
		clause = strings.TrimSpace(clause)
		op := "="
		for _, candidate := range []string{">=", "<=", "!=", "~>", ">", "<", "="} {
			if rest, ok := strings.CutPrefix(clause, candidate); ok {
				op, clause = candidate, strings.TrimSpace(rest)
				break
			}
		}
		want, ok := parseVersion(clause)
		if !ok {
			return false
		}
		if op == "~>" {
			// Pessimistic: >= want and below the next release of its
			// second-to-last given segment.
			if compareVersions(have, want) < 0 {
				return false
			}
			n := strings.Count(strings.TrimPrefix(clause, "v"), ".")
			upper := make([]int, len(want.nums))
			copy(upper, want.nums)
			if n == 0 {
				n = 1
			}
			upper[n-1]++
			for i := n; i < len(upper); i++ {
				upper[i] = 0
			}
			if compareVersions(have, version{nums: upper}) >= 0 {
				return false
			}
			continue
		}
		if !cmpSatisfies(op, compareVersions(have, want)) {
			return false
		}
	}
	return true
}

// version is a parsed major.minor.patch[-prerelease].
type version struct {
	nums []int
	pre  string
}

func parseVersion(s string) (version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	var v version
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s, v.pre = s[:i], s[i+1:]
	}
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 3 {
		return v, false
	}
	v.nums = make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v.nums[i] = n
	}
	return v, true
}

func compareVersions(a, b version) int {
	for i := range 3 {
		switch {
		case a.nums[i] < b.nums[i]:
			return -1
		case a.nums[i] > b.nums[i]:
			return 1
		}
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	return strings.Compare(a.pre, b.pre)
}
