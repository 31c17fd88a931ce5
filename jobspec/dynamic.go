package jobspec

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// This file expands `dynamic` blocks, as HCL's dynblock extension does,
// but on the syntax tree before the job is decoded, so that the decoder
// (and the free-form decoding of driver config blocks, which walks the
// syntax tree) sees ordinary blocks:
//
//	dynamic "port" {
//	  for_each = var.ports          # a list, set, map or object
//	  iterator = p                  # optional; default: the label ("port")
//	  labels   = [p.key]            # optional: the generated blocks' labels
//	  content { static = p.value }  # the body of each generated block
//	}
//
// Inside content (and labels), the iterator's key and value are
// substituted by their values; dynamic blocks nest.

// maxDynamicBlocks bounds the blocks one job file's dynamic blocks may
// generate, so that a small file cannot make a huge job.
const maxDynamicBlocks = 10000

// dynamicExpander expands the dynamic blocks of one job file.
type dynamicExpander struct {
	d         *decoder
	generated int
}

// body returns body with its dynamic blocks (at any depth)
// replaced by the blocks they generate. iters are the iterators of the
// enclosing dynamic blocks.
func (x *dynamicExpander) body(body *hclsyntax.Body, iters map[string]cty.Value) *hclsyntax.Body {
	out := *body
	if len(iters) > 0 {
		out.Attributes = make(hclsyntax.Attributes, len(body.Attributes))
		for name, at := range body.Attributes {
			n := *at
			n.Expr = x.substitute(at.Expr, iters)
			out.Attributes[name] = &n
		}
	}
	out.Blocks = make(hclsyntax.Blocks, 0, len(body.Blocks))
	for _, b := range body.Blocks {
		if b.Type != "dynamic" {
			n := *b
			n.Body = x.body(b.Body, iters)
			out.Blocks = append(out.Blocks, &n)
			continue
		}
		out.Blocks = append(out.Blocks, x.dynamic(b, iters)...)
	}
	return &out
}

// substitute replaces the references to iters in expr by their values.
func (x *dynamicExpander) substitute(expr hclsyntax.Expression, iters map[string]cty.Value) hclsyntax.Expression {
	if len(iters) == 0 {
		return expr
	}
	r := rewriter{src: x.d.src, known: nil, iters: iters}
	out := r.expr(expr)
	x.d.add(r.iterDiags...)
	return out
}

// dynamic returns the blocks a `dynamic "type" { ... }` block generates.
func (x *dynamicExpander) dynamic(b *hclsyntax.Block, iters map[string]cty.Value) []*hclsyntax.Block {
	d := x.d
	if len(b.Labels) != 1 {
		d.errorf(b.DefRange(), "Invalid dynamic block", "A dynamic block takes one label: the type of the blocks it generates, as in dynamic \"port\" { ... }.")
		return nil
	}
	typ := b.Labels[0]
	if typ == "dynamic" || typ == "content" {
		d.errorf(b.LabelRanges[0], "Invalid dynamic block", "A dynamic block cannot generate %q blocks.", typ)
		return nil
	}
	c := d.content(b.Body, []string{"for_each", "iterator", "labels"}, hcl.BlockHeaderSchema{Type: "content"})
	contents := blocksOf(c, "content")
	if len(contents) != 1 {
		d.errorf(b.DefRange(), "Invalid dynamic block", "A dynamic block needs exactly one content { ... } block: the body of each %q block it generates.", typ)
		return nil
	}
	content, ok := contents[0].Body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	name := typ
	if at := c.Attributes["iterator"]; at != nil {
		tr, diags := hcl.AbsTraversalForExpr(at.Expr)
		if diags.HasErrors() || len(tr) != 1 {
			d.errorf(at.Expr.Range(), "Invalid dynamic iterator", "iterator takes a name, as in iterator = port.")
			return nil
		}
		name = tr.RootName()
	}
	forEach := c.Attributes["for_each"]
	if forEach == nil {
		d.errorf(b.DefRange(), "Missing for_each", "A dynamic block needs for_each: the list, set or map to generate %q blocks from.", typ)
		return nil
	}
	coll := d.eval(x.substitute(forEach.Expr.(hclsyntax.Expression), iters))
	if coll == cty.NilVal {
		return nil
	}
	if coll.IsNull() || !(coll.CanIterateElements()) {
		d.errorf(forEach.Expr.Range(), "Invalid for_each", "for_each must be a list, set, map or object; got %s.", friendlyType(coll))
		return nil
	}
	var out []*hclsyntax.Block
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		x.generated++
		if x.generated > maxDynamicBlocks {
			d.errorf(forEach.Expr.Range(), "Too many dynamic blocks", "The dynamic blocks of this job file generate more than %d blocks.", maxDynamicBlocks)
			return out
		}
		inner := make(map[string]cty.Value, len(iters)+1)
		for n, iv := range iters {
			inner[n] = iv
		}
		inner[name] = cty.ObjectVal(map[string]cty.Value{"key": k, "value": v})
		labels, ok := x.labels(c.Attributes["labels"], inner)
		if !ok {
			return out
		}
		gen := &hclsyntax.Block{
			Type:            typ,
			Labels:          labels,
			Body:            x.body(content, inner),
			TypeRange:       b.LabelRanges[0],
			OpenBraceRange:  contents[0].DefRange,
			CloseBraceRange: contents[0].DefRange,
		}
		for range labels {
			gen.LabelRanges = append(gen.LabelRanges, b.LabelRanges[0])
		}
		out = append(out, gen)
	}
	return out
}

// labels evaluates a dynamic block's labels argument for one element.
func (x *dynamicExpander) labels(at *hcl.Attribute, iters map[string]cty.Value) ([]string, bool) {
	if at == nil {
		return nil, true
	}
	d := x.d
	v := d.eval(x.substitute(at.Expr.(hclsyntax.Expression), iters))
	if v == cty.NilVal {
		return nil, false
	}
	if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType()) {
		d.errorf(at.Expr.Range(), "Invalid labels", "labels must be a list of strings; got %s.", friendlyType(v))
		return nil, false
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, l := it.Element()
		if l.IsNull() || l.Type() != cty.String {
			d.errorf(at.Expr.Range(), "Invalid labels", "labels must be a list of strings; got an element of type %s.", friendlyType(l))
			return nil, false
		}
		out = append(out, l.AsString())
	}
	return out, true
}

// friendlyType names v's type for messages.
func friendlyType(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Type().FriendlyName()
}

// substitute replaces a reference to an iterator by its value (r.iters is
// set); other references are kept.
func (r *rewriter) substitute(e *hclsyntax.ScopeTraversalExpr) hclsyntax.Expression {
	root := e.Traversal.RootName()
	v, ok := r.iters[root]
	if !ok || slices.Contains(r.bound, root) {
		return e
	}
	val, diags := e.Traversal.SimpleSplit().Rel.TraverseRel(v)
	if diags.HasErrors() {
		for _, diag := range diags {
			diag.Subject = e.SrcRange.Ptr()
			diag.Detail = fmt.Sprintf("%s (the iterator %q has the attributes key and value).", diag.Detail, root)
		}
		r.iterDiags = append(r.iterDiags, diags...)
		return &hclsyntax.LiteralValueExpr{Val: cty.DynamicVal, SrcRange: e.SrcRange}
	}
	return &hclsyntax.LiteralValueExpr{Val: val, SrcRange: e.SrcRange}
}
