package structs

import (
	"fmt"
	"regexp"
	"strings"
)

// Placement preferences: affinities and spreads (the job file's affinity
// and spread blocks). Constraints (job.go) decide where a group may run;
// these only rank the nodes that may, so a job with an affinity or spread
// nobody can honour still places.

// Weight bounds of affinities and spreads, as Nomad's.
const (
	AffinityMinWeight = -100
	AffinityMaxWeight = 100
	SpreadMaxWeight   = 100
	// DefaultPlacementWeight is the weight of an affinity or spread that
	// does not set one.
	DefaultPlacementWeight = 50
)

// Affinity is a soft placement preference: nodes (or device groups)
// matching it score higher (Weight > 0) or lower (Weight < 0). LTarget,
// Operand and RTarget read as a constraint's; Weight is in [-100, 100] and
// not 0.
type Affinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  int
}

// String renders the affinity as it reads in a job file.
func (a *Affinity) String() string {
	return fmt.Sprintf("%s %s %s %d", a.LTarget, a.Operand, a.RTarget, a.Weight)
}

// Spread asks the scheduler to distribute a group's allocations over the
// values a node attribute takes (racks, zones): evenly over the values
// the feasible nodes have when SpreadTarget is empty, else in the
// percentages SpreadTarget gives; the values it does not name share
// equally what the percentages leave of 100. Weight, in [1, 100], ranks it against the
// job's other spreads.
type Spread struct {
	Attribute    string
	Weight       int
	SpreadTarget []*SpreadTarget
}

// SpreadTarget is the share, in percent of the group's count, that nodes
// whose spread attribute is Value should run.
type SpreadTarget struct {
	Value   string
	Percent int
}

// String renders the spread as it reads in a job file.
func (s *Spread) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "spread %s weight %d", s.Attribute, s.Weight)
	for _, t := range s.SpreadTarget {
		fmt.Fprintf(&b, " %s=%d%%", t.Value, t.Percent)
	}
	return b.String()
}

// Copy returns a deep copy of s.
func (s *Spread) Copy() *Spread {
	if s == nil {
		return nil
	}
	c := *s
	if s.SpreadTarget != nil {
		c.SpreadTarget = make([]*SpreadTarget, len(s.SpreadTarget))
		for i, t := range s.SpreadTarget {
			tc := *t
			c.SpreadTarget[i] = &tc
		}
	}
	return &c
}

func copyAffinities(as []*Affinity) []*Affinity {
	if as == nil {
		return nil
	}
	out := make([]*Affinity, len(as))
	for i, a := range as {
		ac := *a
		out[i] = &ac
	}
	return out
}

func copySpreads(ss []*Spread) []*Spread {
	if ss == nil {
		return nil
	}
	out := make([]*Spread, len(ss))
	for i, s := range ss {
		out[i] = s.Copy()
	}
	return out
}

// affinityOperators are the operators an affinity may use: a constraint's,
// less those that only make sense as hard rules.
var affinityOperators = map[string]bool{
	ConstraintEqual: true, "==": true, "is": true, ConstraintNotEqual: true, "not": true,
	ConstraintLessThan: true, ConstraintLessEqual: true, ConstraintGreaterThan: true, ConstraintGreaterEqual: true,
	ConstraintRegex: true, ConstraintVersion: true, "semver": true,
	ConstraintSetContains: true, "set_contains_all": true, "set_contains_any": true,
}

// nodeTargets are the ${...} references a node-level constraint, affinity
// or spread may name besides ${attr.NAME} and ${meta.NAME}.
var nodeTargets = map[string]bool{
	"${node.unique.id}": true, "${node.unique.name}": true, "${node.datacenter}": true,
	"${node.class}": true, "${node.pool}": true,
}

// CheckNodeTarget returns an error when target is a ${...} reference that
// names nothing a node has; a target without "${" is a literal and passes.
func CheckNodeTarget(target string) error {
	if !strings.Contains(target, "${") {
		return nil
	}
	if nodeTargets[target] {
		return nil
	}
	if strings.HasPrefix(target, "${") && strings.HasSuffix(target, "}") && strings.Count(target, "${") == 1 {
		ref := target[2 : len(target)-1]
		for _, p := range []string{"attr.", "meta."} {
			if name, ok := strings.CutPrefix(ref, p); ok && name != "" && !strings.ContainsAny(name, "{} \t") {
				return nil
			}
		}
	}
	return fmt.Errorf("%q names no node attribute: use ${attr.NAME}, ${meta.NAME}, ${node.datacenter}, ${node.class}, ${node.pool}, ${node.unique.id} or ${node.unique.name}", target)
}

// Validate checks an affinity of a job, group or task.
func (a *Affinity) Validate() error {
	var errs []string
	if a.LTarget == "" {
		errs = append(errs, "attribute is missing: set it to the node attribute to compare, such as \"${meta.rack}\"")
	} else if err := CheckNodeTarget(a.LTarget); err != nil {
		errs = append(errs, "attribute "+err.Error())
	}
	if err := CheckNodeTarget(a.RTarget); err != nil {
		errs = append(errs, "value "+err.Error())
	}
	if !affinityOperators[a.Operand] {
		errs = append(errs, fmt.Sprintf("operator %q is not an affinity operator: use one of =, !=, <, <=, >, >=, regexp, version, semver, set_contains, set_contains_all, set_contains_any", a.Operand))
	} else if a.Operand == ConstraintRegex && !strings.Contains(a.RTarget, "${") {
		if _, err := regexp.Compile(a.RTarget); err != nil {
			errs = append(errs, fmt.Sprintf("value %q is not a regular expression: %v", a.RTarget, err))
		}
	}
	if a.Weight == 0 || a.Weight < AffinityMinWeight || a.Weight > AffinityMaxWeight {
		errs = append(errs, fmt.Sprintf("weight %d must be in [%d, %d] and not 0", a.Weight, AffinityMinWeight, AffinityMaxWeight))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("affinity %s: %s", a.LTarget, strings.Join(errs, "; "))
}

// Validate checks a spread of a job or group.
func (s *Spread) Validate() error {
	var errs []string
	switch {
	case s.Attribute == "":
		errs = append(errs, "attribute is missing: set it to the node attribute to spread over, such as \"${meta.rack}\"")
	case !strings.HasPrefix(s.Attribute, "${"):
		errs = append(errs, fmt.Sprintf("attribute %q is a literal: name a node attribute, such as \"${meta.rack}\"", s.Attribute))
	default:
		if err := CheckNodeTarget(s.Attribute); err != nil {
			errs = append(errs, "attribute "+err.Error())
		}
	}
	if s.Weight <= 0 || s.Weight > SpreadMaxWeight {
		errs = append(errs, fmt.Sprintf("weight %d must be in [1, %d]", s.Weight, SpreadMaxWeight))
	}
	sum := 0
	seen := map[string]bool{}
	for i, t := range s.SpreadTarget {
		if t == nil {
			errs = append(errs, fmt.Sprintf("target %d is null", i+1))
			continue
		}
		if t.Value == "" {
			errs = append(errs, fmt.Sprintf("target %d has no value: label it with the attribute value it is for", i+1))
		} else if seen[t.Value] {
			errs = append(errs, fmt.Sprintf("target %q is given twice", t.Value))
		}
		seen[t.Value] = true
		if t.Percent < 0 || t.Percent > 100 {
			errs = append(errs, fmt.Sprintf("target %q: percent %d must be in [0, 100]", t.Value, t.Percent))
			continue
		}
		sum += t.Percent
	}
	if sum > 100 {
		errs = append(errs, fmt.Sprintf("target percents add up to %d: they must not exceed 100", sum))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("spread %s: %s", s.Attribute, strings.Join(errs, "; "))
}

// validatePlacement checks the affinities and spreads at one level of a
// job; where names it ("job", `group "web"`, ...). add receives each error.
func validatePlacement(where string, affinities []*Affinity, spreads []*Spread, add func(format string, args ...any)) {
	for i, a := range affinities {
		if a == nil {
			add("%s: affinity %d is null", where, i+1)
			continue
		}
		if err := a.Validate(); err != nil {
			add("%s: %v", where, err)
		}
	}
	attrs := map[string]bool{}
	for i, s := range spreads {
		if s == nil {
			add("%s: spread %d is null", where, i+1)
			continue
		}
		if err := s.Validate(); err != nil {
			add("%s: %v", where, err)
		}
		if attrs[s.Attribute] {
			add("%s: spread %s is given twice: merge the blocks", where, s.Attribute)
		}
		attrs[s.Attribute] = true
	}
}

// affinitiesDiff lists added and removed affinities as objects (job plan).
func affinitiesDiff(old, new []*Affinity) *ObjectDiff {
	return listDiff("Affinities", "Affinity", old, new, (*Affinity).String, func(a *Affinity) map[string]string { return flatStruct(a) })
}

// spreadsDiff lists added and removed spreads as objects (job plan); a
// spread's targets are fields "SpreadTarget[VALUE]" holding the percent.
func spreadsDiff(old, new []*Spread) *ObjectDiff {
	return listDiff("Spreads", "Spread", old, new, (*Spread).String, func(s *Spread) map[string]string {
		m := map[string]string{"Attribute": s.Attribute, "Weight": fmt.Sprint(s.Weight)}
		for _, t := range s.SpreadTarget {
			m["SpreadTarget["+t.Value+"]"] = fmt.Sprint(t.Percent)
		}
		return m
	})
}

// listDiff compares two lists of blocks by their rendering: those only in
// old are deleted objects named item, those only in new added ones, all
// under an edited object named name; nil when the lists hold the same.
func listDiff[T any](name, item string, old, new []T, key func(T) string, flat func(T) map[string]string) *ObjectDiff {
	in := func(xs []T, k string) bool {
		for _, x := range xs {
			if key(x) == k {
				return true
			}
		}
		return false
	}
	var objs []*ObjectDiff
	for _, x := range old {
		if !in(new, key(x)) {
			objs = append(objs, &ObjectDiff{Type: DiffTypeDeleted, Name: item, Fields: fieldDiffs(flat(x), nil)})
		}
	}
	for _, x := range new {
		if !in(old, key(x)) {
			objs = append(objs, &ObjectDiff{Type: DiffTypeAdded, Name: item, Fields: fieldDiffs(nil, flat(x))})
		}
	}
	if len(objs) == 0 {
		return nil
	}
	return &ObjectDiff{Type: DiffTypeEdited, Name: name, Objects: objs}
}
