package jobspec

import (
	"regexp"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/hashicorp/hcl/v2"
)

// constraintOperators are the operators a constraint may use.
var constraintOperators = map[string]bool{
	"=": true, "==": true, "is": true, "!=": true, "not": true,
	"<": true, "<=": true, ">": true, ">=": true,
	"distinct_hosts": true, "distinct_property": true,
	"regexp": true, "version": true, "semver": true,
	"set_contains": true, "set_contains_all": true, "set_contains_any": true,
	"is_set": true, "is_not_set": true,
}

// constraintShorthands are arguments that set the operator and the value in
// one go: `version = ">= 1.2"` is `operator = "version"`, `value = ">= 1.2"`.
var constraintShorthands = []string{"version", "semver", "regexp", "set_contains", "set_contains_all", "set_contains_any", "distinct_property"}

// constraint decodes a `constraint { attribute, operator, value }` block.
func (d *decoder) constraint(b *hcl.Block) *api.Constraint {
	attrs := append([]string{"attribute", "operator", "value", "distinct_hosts"}, constraintShorthands...)
	c := d.content(b.Body, attrs)
	con := &api.Constraint{
		LTarget: d.strVal(c.Attributes["attribute"]),
		Operand: d.strVal(c.Attributes["operator"]),
		RTarget: d.strVal(c.Attributes["value"]),
	}
	opAttr := c.Attributes["operator"]

	// The shorthand forms; at most one operator may be given.
	setOp := func(op string, at *hcl.Attribute) {
		if con.Operand != "" && con.Operand != op {
			d.errorf(at.NameRange, "Conflicting constraint operators",
				"%q sets the operator to %q, but it is already %q; use only one of them.", at.Name, op, con.Operand)
			return
		}
		con.Operand = op
		opAttr = at
	}
	if at := c.Attributes["distinct_hosts"]; at != nil {
		v := d.boolean(at)
		switch {
		case v != nil && *v:
			setOp("distinct_hosts", at)
			con.RTarget = "true"
		case len(c.Attributes) == 1:
			// `distinct_hosts = false` alone asks for nothing.
			return nil
		}
	}
	for _, name := range constraintShorthands {
		at := c.Attributes[name]
		if at == nil {
			continue
		}
		val := d.strVal(at)
		setOp(name, at)
		if name == "distinct_property" {
			// The property is the left side; value is an optional limit.
			con.LTarget = val
		} else {
			con.RTarget = val
		}
	}

	if con.Operand == "" {
		con.Operand = "="
	}
	if !constraintOperators[con.Operand] {
		d.errorf(opAttr.Expr.Range(), "Unknown constraint operator",
			"%q is not a constraint operator; use one of =, !=, <, <=, >, >=, regexp, version, semver, set_contains, set_contains_all, set_contains_any, is_set, is_not_set, distinct_hosts, distinct_property.", con.Operand)
		return nil
	}
	if con.Operand == "regexp" && !strings.Contains(con.RTarget, "${") {
		if _, err := regexp.Compile(con.RTarget); err != nil {
			rng := b.DefRange
			if at := c.Attributes["value"]; at != nil {
				rng = at.Expr.Range()
			} else if at := c.Attributes["regexp"]; at != nil {
				rng = at.Expr.Range()
			}
			d.errorf(rng, "Invalid regular expression", "%v.", err)
			return nil
		}
	}
	return con
}

// constraints decodes every constraint block in c.
func (d *decoder) constraints(c *hcl.BodyContent) []*api.Constraint {
	var out []*api.Constraint
	for _, b := range blocksOf(c, "constraint") {
		if con := d.constraint(b); con != nil {
			out = append(out, con)
		}
	}
	return out
}
