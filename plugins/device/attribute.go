package device

import (
	"fmt"
	"strconv"
	"strings"
)

// Attribute is a typed attribute value with an optional unit: "16 GiB" is
// Int 16 with Unit "GiB". Exactly one of the value fields is set; a nil
// pointer is unset, never zero.
type Attribute struct {
	Float  *float64
	Int    *int64
	String *string
	Bool   *bool
	Unit   string
}

// NewIntAttribute returns an integer attribute with unit (may be "").
func NewIntAttribute(v int64, unit string) *Attribute { return &Attribute{Int: &v, Unit: unit} }

// NewFloatAttribute returns a float attribute with unit (may be "").
func NewFloatAttribute(v float64, unit string) *Attribute { return &Attribute{Float: &v, Unit: unit} }

// NewStringAttribute returns a string attribute.
func NewStringAttribute(v string) *Attribute { return &Attribute{String: &v} }

// NewBoolAttribute returns a boolean attribute.
func NewBoolAttribute(v bool) *Attribute { return &Attribute{Bool: &v} }

// ParseAttribute parses a person's rendering of a value: "16 GiB" and
// "16GiB" give Int 16 with Unit "GiB", "1.5 GHz" a Float with its unit,
// "true"/"false" a Bool, "42" an Int; anything else (including a number
// followed by a word that is not a known unit) is a String.
func ParseAttribute(s string) *Attribute {
	t := strings.TrimSpace(s)
	switch t {
	case "true":
		return NewBoolAttribute(true)
	case "false":
		return NewBoolAttribute(false)
	}
	num, unit := splitNumberUnit(t)
	if num == "" || (unit != "" && !KnownUnit(unit)) {
		return NewStringAttribute(s)
	}
	if i, err := strconv.ParseInt(num, 10, 64); err == nil {
		return NewIntAttribute(i, unit)
	}
	if f, err := strconv.ParseFloat(num, 64); err == nil {
		return NewFloatAttribute(f, unit)
	}
	return NewStringAttribute(s)
}

// splitNumberUnit splits "16 GiB" or "16GiB" into "16" and "GiB"; num is ""
// when s does not start with a number.
func splitNumberUnit(s string) (num, unit string) {
	i := 0
	for i < len(s) && (s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == 'e' && i > 0 || (s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	if i == 0 {
		return "", ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// Copy returns a deep copy of a.
func (a *Attribute) Copy() *Attribute {
	if a == nil {
		return nil
	}
	c := &Attribute{Unit: a.Unit}
	if a.Float != nil {
		c.Float = new(*a.Float)
	}
	if a.Int != nil {
		c.Int = new(*a.Int)
	}
	if a.String != nil {
		c.String = new(*a.String)
	}
	if a.Bool != nil {
		c.Bool = new(*a.Bool)
	}
	return c
}

// Validate reports an attribute that has no value, more than one, or a unit
// on a string or a boolean.
func (a *Attribute) Validate() error {
	if a == nil {
		return fmt.Errorf("attribute has no value")
	}
	n := 0
	for _, set := range []bool{a.Float != nil, a.Int != nil, a.String != nil, a.Bool != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("attribute has no value")
	case n > 1:
		return fmt.Errorf("attribute has %d values, want one", n)
	case a.Unit != "" && (a.String != nil || a.Bool != nil):
		return fmt.Errorf("attribute unit %q on a non-numeric value", a.Unit)
	case a.Unit != "" && !KnownUnit(a.Unit):
		return fmt.Errorf("attribute has unknown unit %q", a.Unit)
	}
	return nil
}

// GoString renders the attribute as a person reads it ("16 GiB").
func (a *Attribute) GoString() string {
	if a == nil {
		return ""
	}
	var v string
	switch {
	case a.Int != nil:
		v = strconv.FormatInt(*a.Int, 10)
	case a.Float != nil:
		v = strconv.FormatFloat(*a.Float, 'f', -1, 64)
	case a.Bool != nil:
		v = strconv.FormatBool(*a.Bool)
	case a.String != nil:
		v = *a.String
	}
	if a.Unit != "" {
		v += " " + a.Unit
	}
	return v
}

// units are the units an attribute may carry, by family, with their factor
// to the family's base unit.
var units = map[string]struct {
	family string
	factor float64
}{
	"B": {"byte", 1}, "KB": {"byte", 1e3}, "kB": {"byte", 1e3}, "MB": {"byte", 1e6},
	"GB": {"byte", 1e9}, "TB": {"byte", 1e12}, "PB": {"byte", 1e15},
	"KiB": {"byte", 1 << 10}, "MiB": {"byte", 1 << 20}, "GiB": {"byte", 1 << 30},
	"TiB": {"byte", 1 << 40}, "PiB": {"byte", 1 << 50},
	"B/s": {"byterate", 1}, "KB/s": {"byterate", 1e3}, "MB/s": {"byterate", 1e6},
	"GB/s": {"byterate", 1e9}, "KiB/s": {"byterate", 1 << 10}, "MiB/s": {"byterate", 1 << 20},
	"GiB/s": {"byterate", 1 << 30},
	"Hz":    {"hertz", 1}, "KHz": {"hertz", 1e3}, "kHz": {"hertz", 1e3}, "MHz": {"hertz", 1e6},
	"GHz": {"hertz", 1e9},
	"mW":  {"watt", 1e-3}, "W": {"watt", 1}, "kW": {"watt", 1e3},
	"C": {"celsius", 1},
	"%": {"percent", 1},
}

// KnownUnit reports whether unit is one an attribute may carry.
func KnownUnit(unit string) bool {
	_, ok := units[unit]
	return ok
}

// UnitFactor returns unit's family ("byte", "hertz", "watt", ...) and its
// factor to the family's base unit; ok is false for an unknown unit.
func UnitFactor(unit string) (family string, factor float64, ok bool) {
	u, ok := units[unit]
	return u.family, u.factor, ok
}
