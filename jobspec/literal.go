package jobspec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// keepLiteral returns a copy of expr in which every reference to a variable
// that the job file does not define (attr.*, node.*, meta.*, env["X"],
// NOMAD_ALLOC_ID, ...) is replaced by its own source text wrapped in "${}".
// Those references are resolved later, by the scheduler or by the client,
// so the parser must hand them on untouched: "${attr.kernel.name}" stays
// "${attr.kernel.name}", and "/data/${NOMAD_ALLOC_ID}" stays as written.
//
// known holds the root names that HCL evaluates itself (var, local); nil
// means every name, so that nothing is kept literally. Expression kinds
// not handled here are returned as they are; evaluating them reports
// unknown variables as errors, with their position.
//
// When b is not nil, the copy is also metered (budget.go): the operations
// whose cost grows with their operands' size (building strings, iterating,
// comparing, splatting) charge b before they run.
func keepLiteral(expr hclsyntax.Expression, src []byte, known map[string]bool, b *budget) hclsyntax.Expression {
	r := rewriter{src: src, known: known, budget: b}
	return r.expr(expr)
}

type rewriter struct {
	src   []byte
	known map[string]bool
	// bound holds the names bound by enclosing for expressions.
	bound  []string
	budget *budget
	// iters, when not nil, makes the rewriter substitute the iterators of
	// enclosing dynamic blocks (dynamic.go) instead of keeping references
	// literally: a reference rooted at one of them becomes its value, and
	// every other expression is kept as it is (no quoting, no metering,
	// since the expression is rewritten again when it is evaluated).
	iters map[string]cty.Value
	// iterDiags collects the errors of substituted references.
	iterDiags hcl.Diagnostics
}

func (r *rewriter) isKnown(name string) bool {
	if r.known == nil || r.known[name] {
		return true
	}
	for _, b := range r.bound {
		if b == name {
			return true
		}
	}
	return false
}

func (r *rewriter) exprs(in []hclsyntax.Expression) []hclsyntax.Expression {
	out := make([]hclsyntax.Expression, len(in))
	for i, e := range in {
		out[i] = r.expr(e)
	}
	return out
}

func (r *rewriter) expr(expr hclsyntax.Expression) hclsyntax.Expression {
	switch e := expr.(type) {
	case nil:
		return nil
	case *hclsyntax.ScopeTraversalExpr:
		if r.iters != nil {
			return r.substitute(e)
		}
		if r.isKnown(e.Traversal.RootName()) {
			return e
		}
		return r.literal(e.SrcRange)
	case *hclsyntax.TemplateExpr:
		n := *e
		n.Parts = r.exprs(e.Parts)
		for i, p := range n.Parts {
			n.Parts[i] = r.budget.meterSize(p) // each part is copied into the string
		}
		return &n
	case *hclsyntax.TemplateWrapExpr:
		n := *e
		n.Wrapped = r.expr(e.Wrapped)
		if r.iters != nil {
			return &n
		}
		return quotedExpr{&n}
	case quotedExpr:
		return e
	case *hclsyntax.TemplateJoinExpr:
		n := *e
		n.Tuple = r.budget.meterSize(r.expr(e.Tuple))
		return &n
	case *hclsyntax.TupleConsExpr:
		n := *e
		n.Exprs = r.exprs(e.Exprs)
		return &n
	case *hclsyntax.ObjectConsExpr:
		n := *e
		n.Items = make([]hclsyntax.ObjectConsItem, len(e.Items))
		for i, it := range e.Items {
			n.Items[i] = hclsyntax.ObjectConsItem{KeyExpr: r.key(it.KeyExpr), ValueExpr: r.expr(it.ValueExpr)}
		}
		return &n
	case *hclsyntax.ConditionalExpr:
		n := *e
		n.Condition = r.expr(e.Condition)
		// Both results are evaluated and may be converted to one type.
		n.TrueResult = r.budget.meterConverted(r.expr(e.TrueResult))
		n.FalseResult = r.budget.meterConverted(r.expr(e.FalseResult))
		return &n
	case *hclsyntax.FunctionCallExpr:
		n := *e
		n.Args = r.exprs(e.Args)
		return &n
	case *hclsyntax.ParenthesesExpr:
		n := *e
		n.Expression = r.expr(e.Expression)
		return &n
	case *hclsyntax.BinaryOpExpr:
		n := *e
		n.LHS = r.expr(e.LHS)
		n.RHS = r.expr(e.RHS)
		if e.Op == hclsyntax.OpEqual || e.Op == hclsyntax.OpNotEqual { // compares whole values
			n.LHS = r.budget.meterSize(n.LHS)
			n.RHS = r.budget.meterSize(n.RHS)
		}
		return &n
	case *hclsyntax.UnaryOpExpr:
		n := *e
		n.Val = r.expr(e.Val)
		return &n
	case *hclsyntax.IndexExpr:
		n := *e
		n.Collection = r.expr(e.Collection)
		n.Key = r.expr(e.Key)
		return &n
	case *hclsyntax.RelativeTraversalExpr:
		n := *e
		n.Source = r.expr(e.Source)
		return &n
	case *hclsyntax.SplatExpr:
		n := *e
		n.Source = r.budget.meterLength(r.expr(e.Source), costPerElement)
		return &n
	case *hclsyntax.ForExpr:
		n := *e
		n.CollExpr = r.budget.meterLength(r.expr(e.CollExpr), forCost(e))
		saved := r.bound
		r.bound = append(append([]string(nil), saved...), e.KeyVar, e.ValVar)
		n.KeyExpr = r.expr(e.KeyExpr)
		n.ValExpr = r.expr(e.ValExpr)
		n.CondExpr = r.expr(e.CondExpr)
		r.bound = saved
		return &n
	default:
		return expr
	}
}

// key rewrites an object key. A bare name key ({ foo = 1 }) is a literal
// name, not a variable reference, and is kept as it is.
func (r *rewriter) key(expr hclsyntax.Expression) hclsyntax.Expression {
	k, ok := expr.(*hclsyntax.ObjectConsKeyExpr)
	if !ok {
		return r.expr(expr)
	}
	if !k.ForceNonLiteral {
		if _, isName := k.Wrapped.(*hclsyntax.ScopeTraversalExpr); isName {
			return k
		}
	}
	n := *k
	n.Wrapped = r.expr(k.Wrapped)
	return &n
}

// literal is the "${...}" text of the reference at rng.
func (r *rewriter) literal(rng hcl.Range) hclsyntax.Expression {
	text := "${" + string(rng.SliceBytes(r.src)) + "}"
	return &hclsyntax.LiteralValueExpr{Val: cty.StringVal(text), SrcRange: rng}
}

// quotedExpr is a string made of a single interpolation ("${local.port}").
// HCL gives it the type of the interpolated value; a job file's author
// wrote a string, so a number or bool becomes its string form. Lists and
// maps are left as they are ("${var.dcs}" is the list).
type quotedExpr struct {
	*hclsyntax.TemplateWrapExpr
}

// Value evaluates the interpolation and turns a number or bool into a string.
func (q quotedExpr) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	v, diags := q.TemplateWrapExpr.Value(ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		return v, diags
	}
	if ty := v.Type(); ty == cty.Number || ty == cty.Bool {
		if sv, err := convert.Convert(v, cty.String); err == nil {
			return sv, diags
		}
	}
	return v, diags
}
