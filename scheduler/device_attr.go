package scheduler

import (
	"regexp"
	"strings"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// deviceTarget resolves a device constraint or affinity target against a
// device group: ${device.vendor}, ${device.type}, ${device.model} (also
// ${device.name}) and ${device.attr.NAME}; anything else is a literal
// parsed as a typed value ("8 GiB" is 8 with unit GiB).
func deviceTarget(target string, g *structs.NodeDeviceResource) (*structs.Attribute, bool) {
	if !strings.HasPrefix(target, "${") || !strings.HasSuffix(target, "}") {
		return parseAttr(target), true
	}
	ref := target[2 : len(target)-1]
	str := func(s string) (*structs.Attribute, bool) { return &structs.Attribute{String: &s}, true }
	switch ref {
	case "device.vendor":
		return str(g.Vendor)
	case "device.type":
		return str(g.Type)
	case "device.model", "device.name":
		return str(g.Name)
	}
	if k, ok := strings.CutPrefix(ref, "device.attr."); ok {
		a, ok := g.Attributes[k]
		return a, ok && a != nil
	}
	return nil, false
}

// parseAttr parses a literal the way plugins parse theirs.
func parseAttr(s string) *structs.Attribute {
	a := device.ParseAttribute(s)
	return &structs.Attribute{Float: a.Float, Int: a.Int, String: a.String, Bool: a.Bool, Unit: a.Unit}
}

// attrString renders an attribute for string operators (regexp, version,
// set_contains): its value, without the unit.
func attrString(a *structs.Attribute) string {
	c := *a
	c.Unit = ""
	return c.GoString()
}

// attrNumber returns a numeric attribute's value in its unit family's base
// unit, and the family ("" without a unit).
func attrNumber(a *structs.Attribute) (v float64, family string, ok bool) {
	switch {
	case a.Int != nil:
		v = float64(*a.Int)
	case a.Float != nil:
		v = *a.Float
	default:
		return 0, "", false
	}
	if a.Unit == "" {
		return v, "", true
	}
	fam, f, known := device.UnitFactor(a.Unit)
	if !known {
		return 0, "", false
	}
	return v * f, fam, true
}

// compareAttrs compares two attributes: numbers by value (converting units
// of one family: 8 GiB < 16384 MiB is false), strings and booleans by their
// text. ok is false when they cannot be compared (a number against a
// string, or units of different families).
func compareAttrs(l, r *structs.Attribute) (cmp int, ok bool) {
	lv, lf, lnum := attrNumber(l)
	rv, rf, rnum := attrNumber(r)
	switch {
	case lnum && rnum:
		if lf != rf && lf != "" && rf != "" {
			return 0, false
		}
		switch {
		case lv < rv:
			return -1, true
		case lv > rv:
			return 1, true
		}
		return 0, true
	case lnum != rnum:
		return 0, false
	}
	return strings.Compare(attrString(l), attrString(r)), true
}

// deviceMeets reports whether device group g satisfies constraint c.
func deviceMeets(c *structs.Constraint, g *structs.NodeDeviceResource, regexps map[string]*regexp.Regexp) bool {
	l, lok := deviceTarget(c.LTarget, g)
	r, rok := deviceTarget(c.RTarget, g)
	switch c.Operand {
	case structs.ConstraintAttributeIsSet:
		return lok
	case structs.ConstraintAttributeNotSet:
		return !lok
	}
	if !lok || !rok {
		return c.Operand == structs.ConstraintNotEqual || c.Operand == "not"
	}
	switch c.Operand {
	case "", structs.ConstraintEqual, "==", "is":
		cmp, ok := compareAttrs(l, r)
		return ok && cmp == 0
	case structs.ConstraintNotEqual, "not":
		cmp, ok := compareAttrs(l, r)
		return !ok || cmp != 0
	case structs.ConstraintLessThan, structs.ConstraintLessEqual, structs.ConstraintGreaterThan, structs.ConstraintGreaterEqual:
		cmp, ok := compareAttrs(l, r)
		return ok && cmpSatisfies(c.Operand, cmp)
	case structs.ConstraintRegex:
		rv := attrString(r)
		re, seen := regexps[rv]
		if !seen {
			re, _ = regexp.Compile(rv)
			regexps[rv] = re
		}
		return re != nil && re.MatchString(attrString(l))
	case structs.ConstraintVersion:
		return versionMatches(attrString(l), attrString(r))
	case structs.ConstraintSemver:
		return semverMatches(attrString(l), attrString(r))
	case structs.ConstraintSetContains, structs.ConstraintSetContainsAll:
		return setContains(attrString(l), attrString(r), true)
	case structs.ConstraintSetContainsAny:
		return setContains(attrString(l), attrString(r), false)
	}
	return false
}
