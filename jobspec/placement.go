package jobspec

import (
	"regexp"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/hashicorp/hcl/v2"
)

// The placement preference blocks: affinity (job, group, task) and spread
// (job, group). Ranges and operators are checked here so that a mistake
// is reported at its line; the server checks them again for API clients.

// affinityOperators are the operators an affinity may use.
var affinityOperators = map[string]bool{
	"=": true, "==": true, "is": true, "!=": true, "not": true,
	"<": true, "<=": true, ">": true, ">=": true,
	"regexp": true, "version": true, "semver": true,
	"set_contains": true, "set_contains_all": true, "set_contains_any": true,
}

// nodeRef matches the ${...} references a node-level affinity or spread
// may name.
var nodeRef = regexp.MustCompile(`^\$\{(attr\.[^{}\s]+|meta\.[^{}\s]+|node\.(unique\.id|unique\.name|datacenter|class|pool))\}$`)

const nodeRefHelp = "use ${attr.NAME}, ${meta.NAME}, ${node.datacenter}, ${node.class}, ${node.pool}, ${node.unique.id} or ${node.unique.name}"

// affinity decodes an `affinity { attribute, operator, value, weight }` block.
func (d *decoder) affinity(b *hcl.Block) *api.Affinity {
	c := d.content(b.Body, []string{"attribute", "operator", "value", "weight"})
	a := &api.Affinity{
		LTarget: d.strVal(c.Attributes["attribute"]),
		Operand: d.strVal(c.Attributes["operator"]),
		RTarget: d.strVal(c.Attributes["value"]),
		Weight:  d.integer(c.Attributes["weight"]),
	}
	if a.Operand == "" {
		a.Operand = "="
	}
	ok := true
	if at := c.Attributes["attribute"]; at == nil {
		d.errorf(b.DefRange, "Missing affinity attribute", "An affinity needs attribute = the node attribute to compare, such as \"${meta.rack}\".")
		ok = false
	} else if strings.Contains(a.LTarget, "${") && !nodeRef.MatchString(a.LTarget) {
		d.errorf(at.Expr.Range(), "Unknown node attribute", "%q names no node attribute: %s.", a.LTarget, nodeRefHelp)
		ok = false
	}
	if !affinityOperators[a.Operand] {
		d.errorf(c.Attributes["operator"].Expr.Range(), "Unknown affinity operator",
			"%q is not an affinity operator; use one of =, !=, <, <=, >, >=, regexp, version, semver, set_contains, set_contains_all, set_contains_any.", a.Operand)
		ok = false
	} else if a.Operand == "regexp" && !strings.Contains(a.RTarget, "${") {
		if _, err := regexp.Compile(a.RTarget); err != nil {
			rng := b.DefRange
			if at := c.Attributes["value"]; at != nil {
				rng = at.Expr.Range()
			}
			d.errorf(rng, "Invalid regular expression", "%v.", err)
			ok = false
		}
	}
	if at := c.Attributes["weight"]; at != nil && a.Weight != nil && (*a.Weight == 0 || *a.Weight < -100 || *a.Weight > 100) {
		d.errorf(at.Expr.Range(), "Invalid affinity weight", "The weight must be in [-100, 100] and not 0, got %d.", *a.Weight)
		ok = false
	}
	if !ok {
		return nil
	}
	return a
}

// affinities decodes every affinity block in c.
func (d *decoder) affinities(c *hcl.BodyContent) []*api.Affinity {
	var out []*api.Affinity
	for _, b := range blocksOf(c, "affinity") {
		if a := d.affinity(b); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// spread decodes a `spread { attribute, weight, target "VALUE" { percent } }` block.
func (d *decoder) spread(b *hcl.Block) *api.Spread {
	c := d.content(b.Body, []string{"attribute", "weight"}, hcl.BlockHeaderSchema{Type: "target", LabelNames: []string{"value"}})
	s := &api.Spread{
		Attribute: d.strVal(c.Attributes["attribute"]),
		Weight:    d.integer(c.Attributes["weight"]),
	}
	ok := true
	if at := c.Attributes["attribute"]; at == nil {
		d.errorf(b.DefRange, "Missing spread attribute", "A spread needs attribute = the node attribute to spread over, such as \"${meta.rack}\".")
		ok = false
	} else if !nodeRef.MatchString(s.Attribute) {
		d.errorf(at.Expr.Range(), "Unknown node attribute", "%q names no node attribute: %s.", s.Attribute, nodeRefHelp)
		ok = false
	}
	if at := c.Attributes["weight"]; at != nil && s.Weight != nil && (*s.Weight < 1 || *s.Weight > 100) {
		d.errorf(at.Expr.Range(), "Invalid spread weight", "The weight must be in [1, 100], got %d.", *s.Weight)
		ok = false
	}
	sum := 0
	seen := map[string]hcl.Range{}
	for _, tb := range blocksOf(c, "target") {
		value := tb.Labels[0]
		if prev, dup := seen[value]; dup {
			d.errorf(tb.LabelRanges[0], "Duplicate spread target", "A target %q is already defined at %s.", value, lineCol1(prev))
			ok = false
			continue
		}
		seen[value] = tb.DefRange
		if value == "" {
			d.errorf(tb.LabelRanges[0], "Empty spread target", "Label the target with the attribute value it is for, such as target \"rack-1\".")
			ok = false
		}
		tc := d.content(tb.Body, []string{"percent"})
		t := &api.SpreadTarget{Value: value}
		if at := tc.Attributes["percent"]; at != nil {
			if p := d.integer(at); p != nil {
				if *p < 0 || *p > 100 {
					d.errorf(at.Expr.Range(), "Invalid spread percent", "The percent must be in [0, 100], got %d.", *p)
					ok = false
				}
				t.Percent = *p
			}
		}
		sum += t.Percent
		s.SpreadTarget = append(s.SpreadTarget, t)
	}
	if sum > 100 {
		d.errorf(b.DefRange, "Spread targets exceed 100%", "The targets' percents add up to %d; they must not exceed 100.", sum)
		ok = false
	}
	if !ok {
		return nil
	}
	return s
}

// spreads decodes every spread block in c.
func (d *decoder) spreads(c *hcl.BodyContent) []*api.Spread {
	var out []*api.Spread
	for _, b := range blocksOf(c, "spread") {
		if s := d.spread(b); s != nil {
			out = append(out, s)
		}
	}
	return out
}
