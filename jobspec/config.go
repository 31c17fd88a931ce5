package jobspec

import (
	"math"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// freeform decodes a block whose content the parser does not know, such as
// a task's driver `config` or a scaling `policy`: every argument becomes its
// value (string, number, bool, list, map) and every nested block is
// appended to a list of maps under its type, the shape Nomad's drivers
// expect: `mount { ... }` twice gives "mount": [{...}, {...}]. A label
// nests one more level of the same shape: `check "cpu" { ... }` gives
// "check": [{"cpu": [{...}]}].
func (d *decoder) freeform(body hcl.Body) map[string]any {
	out := map[string]any{}
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		// Only native syntax reaches here; keep a safe answer anyway.
		attrs, diags := body.JustAttributes()
		d.add(diags...)
		for _, attr := range sortedHCLAttrs(attrs) {
			d.setFree(out, attr.Name, attr.Expr)
		}
		return out
	}
	types := blockTypes(sb)
	for _, attr := range sortedAttrs(sb.Attributes) {
		name := attr.Name
		if _, clash := types[name]; clash {
			d.errorf(attr.NameRange, "Duplicate "+name,
				"%s is set both as an argument and as a block; use one of them.", name)
			continue
		}
		d.setFree(out, name, attr.Expr)
	}
	for _, b := range sb.Blocks {
		var v any = d.freeform(b.Body)
		for i := len(b.Labels) - 1; i >= 0; i-- {
			v = map[string]any{b.Labels[i]: []any{v}}
		}
		list, _ := out[b.Type].([]any)
		out[b.Type] = append(list, v)
	}
	return out
}

func blockTypes(b *hclsyntax.Body) map[string]struct{} {
	out := make(map[string]struct{}, len(b.Blocks))
	for _, blk := range b.Blocks {
		out[blk.Type] = struct{}{}
	}
	return out
}

func (d *decoder) setFree(out map[string]any, name string, expr hcl.Expression) {
	v := d.eval(expr)
	if v == cty.NilVal || v.IsNull() {
		return
	}
	gv := goValue(v)
	if !jsonSafe(gv) {
		d.errorf(expr.Range(), "Invalid number", "Numbers must be finite.")
		return
	}
	out[name] = gv
}

// jsonSafe reports whether v encodes to JSON (no infinite numbers).
func jsonSafe(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	case []any:
		for _, e := range x {
			if !jsonSafe(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !jsonSafe(e) {
				return false
			}
		}
	}
	return true
}

// sortedAttrs returns the attributes in source order, so that errors come
// out in a stable order.
func sortedAttrs(m hclsyntax.Attributes) []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SrcRange.Start.Byte < out[j].SrcRange.Start.Byte })
	return out
}

// sortedHCLAttrs returns the attributes in source order.
func sortedHCLAttrs(m hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}
