package jobspec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/customdecode"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/drover-io/drover/inputlimit"
)

// MaxEvalBytes bounds what one job file's expressions may compute: the
// strings they build, the values functions return, the elements splats and
// for expressions produce. A small file can describe an enormous value
// (forty locals that each double a string reach a terabyte; two nested for
// expressions over long lists, billions of elements), so the parser meters
// evaluation and stops, with an error, once the total passes this limit.
// Real job files compute a few kilobytes.
const MaxEvalBytes = 16 << 20

// Costs charged to the budget, in bytes.
const (
	// costPerNode is charged per node of a for expression's body, for each
	// of its iterations: what evaluating the body allocates at least.
	costPerNode = 64
	// costPerElement is charged per element a splat produces.
	costPerElement = 16
	// costScalar is the size of a number, a bool or a null.
	costScalar = 8
	// costEntry is charged per element of a list, set, map, tuple or
	// object, on top of the element itself: about what a cty value and
	// its part of a structural type take in memory.
	costEntry = 32
)

// budget meters the evaluation of one job file. Once spent it stays spent:
// every later charge fails at once, so that nothing more is computed, and
// the parse fails even where try() or can() swallowed the error.
type budget struct {
	left  int64
	spent *hcl.Range // where it ran out; nil while it lasts
}

func newBudget() *budget { return &budget{left: MaxEvalBytes} }

// charge spends n bytes for the expression at rng; it returns the error to
// report when the budget is (or was already) spent.
func (b *budget) charge(n int64, rng hcl.Range) *hcl.Diagnostic {
	if b.spent == nil {
		b.left -= max(n, 1)
		if b.left >= 0 {
			return nil
		}
		b.spent = rng.Ptr()
	}
	return b.diag(rng)
}

// diag is the error of a spent budget, at rng.
func (b *budget) diag(rng hcl.Range) *hcl.Diagnostic {
	d := errorAt(rng, "Job file computes too much",
		fmt.Sprintf("the expressions of this job file compute more than %d MiB of values (strings, lists, "+
			"function results, for-expression iterations); drover stops there to protect the agent: "+
			"compute less, or write the value out", MaxEvalBytes>>20))
	if rng.Filename == "" {
		d.Subject = nil // a function's charge: no position of its own
	}
	return d
}

// measure returns the size of v, as charged (its strings' bytes, 8 bytes
// per other scalar, 32 per element), counting up to limit only, and
// whether v nests deeper than inputlimit.MaxNesting. Values shared
// between elements count each time: what is measured is what copying or
// encoding the value costs.
func measure(v cty.Value, limit int64) (size int64, tooDeep bool) {
	m := measurer{limit: limit}
	m.walk(v, 0)
	return m.size, m.tooDeep
}

type measurer struct {
	size, limit int64
	tooDeep     bool
}

func (m *measurer) walk(v cty.Value, depth int) {
	if m.size > m.limit || m.tooDeep {
		return
	}
	if depth > inputlimit.MaxNesting {
		m.tooDeep = true
		return
	}
	v, _ = v.Unmark()
	ty := v.Type()
	switch {
	case v.IsNull() || !v.IsKnown():
		m.size += costScalar
	case ty == cty.String:
		m.size += int64(len(v.AsString()))
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType() || ty.IsMapType() || ty.IsObjectType():
		m.size += costEntry
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			if ty.IsMapType() || ty.IsObjectType() {
				m.size += int64(len(k.AsString()))
			}
			m.size += costEntry
			m.walk(e, depth+1)
			if m.size > m.limit || m.tooDeep {
				return
			}
		}
	default: // number, bool, capsule
		m.size += costScalar
	}
}

// chargeValue charges the size of v, which the expression at rng produced
// and which is about to be copied or kept, and refuses one nested deeper
// than inputlimit.MaxNesting.
func (b *budget) chargeValue(v cty.Value, rng hcl.Range) *hcl.Diagnostic {
	size, tooDeep := measure(v, b.left)
	if tooDeep {
		return errorAt(rng, "Value nested too deep",
			fmt.Sprintf("this value nests more than %d levels deep; flatten it", inputlimit.MaxNesting))
	}
	return b.charge(size, rng)
}

// metered is an expression whose evaluation is charged to a budget: cost
// says what its value costs (its size, or the iterations it drives).
// Embedding the expression keeps it an hclsyntax.Expression.
type metered struct {
	hclsyntax.Expression
	b    *budget
	cost func(cty.Value) int64
}

// Value evaluates the expression unless the budget is spent, then charges
// its cost before any enclosing expression copies or iterates over it.
func (m metered) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if m.b.spent != nil {
		return cty.DynamicVal, hcl.Diagnostics{m.b.diag(m.Range())}
	}
	v, diags := m.Expression.Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	var d *hcl.Diagnostic
	if m.cost == nil {
		d = m.b.chargeValue(v, m.Range())
	} else {
		d = m.b.charge(m.cost(v), m.Range())
	}
	if d != nil {
		return cty.DynamicVal, append(diags, d)
	}
	return v, diags
}

// meterSize charges the size of expr's value.
func (b *budget) meterSize(expr hclsyntax.Expression) hclsyntax.Expression {
	if b == nil || expr == nil {
		return expr
	}
	if _, literal := expr.(*hclsyntax.LiteralValueExpr); literal {
		return expr // its size is in the file, already bounded
	}
	return metered{Expression: expr, b: b}
}

// meterConverted charges the size of expr's value and what converting it
// to a list or map type costs: a conditional's results are unified.
func (b *budget) meterConverted(expr hclsyntax.Expression) hclsyntax.Expression {
	if b == nil || expr == nil {
		return expr
	}
	return metered{Expression: expr, b: b, cost: func(v cty.Value) int64 {
		size, _ := measure(v, b.left)
		return sat(size + convertCost(v, b.left))
	}}
}

// chargeConversion charges converting v, which the expression at rng
// produced, to a list, set or map type.
func (b *budget) chargeConversion(v cty.Value, rng hcl.Range) *hcl.Diagnostic {
	return b.charge(convertCost(v, b.left), rng)
}

// meterLength charges perElement for each element of expr's value.
func (b *budget) meterLength(expr hclsyntax.Expression, perElement int64) hclsyntax.Expression {
	if b == nil || expr == nil {
		return expr
	}
	return metered{Expression: expr, b: b, cost: func(v cty.Value) int64 {
		v, _ = v.Unmark()
		if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
			return 0
		}
		return int64(v.LengthInt()) * perElement
	}}
}

// forCost is what one iteration of a for expression costs: its body's
// nodes, each evaluated once per element.
func forCost(e *hclsyntax.ForExpr) int64 {
	nodes := int64(0)
	for _, e := range []hclsyntax.Expression{e.KeyExpr, e.ValExpr, e.CondExpr} {
		var n hclsyntax.Node = e
		if n == nil {
			continue
		}
		_ = hclsyntax.VisitAll(n, func(hclsyntax.Node) hcl.Diagnostics {
			nodes++
			return nil
		})
	}
	return max(nodes, 1) * costPerNode
}

// meterFunctions wraps every function so that a call is charged: before
// it runs, what converting its arguments costs and what it may produce
// (estimated from its arguments); after, what it produced beyond that
// estimate. The wrapper takes its arguments unconverted (HCL would convert
// them before any charge) and converts them itself.
func meterFunctions(funcs map[string]function.Function, b *budget) map[string]function.Function {
	out := make(map[string]function.Function, len(funcs))
	for name, f := range funcs {
		params := f.Params()
		for i := range params {
			params[i].Type = meteredParam(params[i].Type)
		}
		var varParam *function.Parameter
		if vp := f.VarParam(); vp != nil {
			c := *vp
			c.Type = meteredParam(c.Type)
			varParam = &c
		}
		convert := func(args []cty.Value) ([]cty.Value, error) {
			if b.spent != nil {
				return nil, budgetError()
			}
			return convertArgs(f, args, b)
		}
		out[name] = function.New(&function.Spec{
			Description: f.Description(),
			Params:      params,
			VarParam:    varParam,
			Type: func(args []cty.Value) (cty.Type, error) {
				args, err := convert(args)
				if err != nil {
					return cty.NilType, err
				}
				return f.ReturnTypeForValues(args)
			},
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				args, err := convert(args)
				if err != nil {
					return cty.NilVal, err
				}
				if err := precheck(name, args); err != nil {
					return cty.NilVal, err
				}
				pre := estimate(name, args, b.left)
				if b.charge(pre, hcl.Range{}) != nil {
					return cty.NilVal, budgetError()
				}
				v, err := f.Call(args)
				if err != nil {
					return v, err
				}
				if size, _ := measure(v, b.left+pre); size > pre && b.charge(size-pre, hcl.Range{}) != nil {
					return cty.NilVal, budgetError()
				}
				return v, nil
			},
		})
	}
	return out
}

// meteredParam is the type a wrapped function's parameter takes: any value,
// converted by convertArgs, except the expressions that try() and can()
// take, which HCL must keep handing over as they are.
func meteredParam(ty cty.Type) cty.Type {
	if customdecode.CustomExpressionDecoderForType(ty) != nil {
		return ty
	}
	return cty.DynamicPseudoType
}

// convertArgs converts args to the types of f's parameters, as HCL would
// have, after charging what converting a tuple or object costs.
func convertArgs(f function.Function, args []cty.Value, b *budget) ([]cty.Value, error) {
	params, varParam := f.Params(), f.VarParam()
	out := make([]cty.Value, len(args))
	for i, a := range args {
		p := varParam
		if i < len(params) {
			p = &params[i]
		}
		if p == nil || meteredParam(p.Type) != cty.DynamicPseudoType || p.Type == cty.DynamicPseudoType {
			out[i] = a
			continue
		}
		if b.charge(convertCost(a, b.left), hcl.Range{}) != nil {
			return nil, budgetError()
		}
		c, err := convert.Convert(a, p.Type)
		if err != nil {
			return nil, function.NewArgErrorf(i, "invalid value for %q parameter: %s", p.Name, err)
		}
		out[i] = c
	}
	return out, nil
}

// convertCost is what converting v to a list, set or map type may cost,
// counted up to limit: to convert a tuple or an object, cty unifies its
// element types by comparing every pair of them, so the cost grows with
// the square of its length (a list of 10,000 strings takes seconds).
func convertCost(v cty.Value, limit int64) int64 {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() {
		return 0
	}
	ty := v.Type()
	if !ty.IsTupleType() && !ty.IsObjectType() && !ty.IsListType() && !ty.IsMapType() && !ty.IsSetType() {
		return 0
	}
	var cost int64
	if ty.IsTupleType() || ty.IsObjectType() {
		size, _ := measure(v, limit)
		cost = mulSat(int64(v.LengthInt()), size) / costEntry
	}
	for it := v.ElementIterator(); it.Next() && cost <= limit; {
		_, e := it.Element()
		cost = sat(cost + convertCost(e, limit-cost))
	}
	return cost
}

func budgetError() error {
	return fmt.Errorf("the job file computes more than %d MiB of values; compute less", MaxEvalBytes>>20)
}

// precheck refuses arguments a function must not see: JSON nested too
// deep for jsondecode.
func precheck(name string, args []cty.Value) error {
	if name == "jsondecode" && len(args) == 1 && args[0].IsKnown() && !args[0].IsNull() && args[0].Type() == cty.String {
		s, _ := args[0].Unmark()
		if err := inputlimit.CheckJSON("", []byte(s.AsString()), inputlimit.MaxNesting); err != nil {
			return err
		}
	}
	return nil
}

// smallResult are functions whose result is at most about the size of one
// argument, or an element of one: charged for what they return only.
var smallResult = map[string]bool{
	"abs": true, "can": true, "ceil": true, "chomp": true, "coalesce": true, "contains": true,
	"element": true, "floor": true, "formatdate": true, "index": true, "length": true,
	"log": true, "lookup": true, "lower": true, "max": true, "min": true, "parseint": true,
	"pow": true, "range": true, "regex": true, "signum": true, "strrev": true, "substr": true,
	"timeadd": true, "title": true, "tobool": true, "tonumber": true, "tostring": true,
	"trim": true, "trimprefix": true, "trimspace": true, "trimsuffix": true, "try": true, "upper": true,
}

// estimate is what a call may produce, at most limit+1: the size of its
// arguments (it may copy them all, as concat and jsonencode do), or more
// for the functions whose result can be much larger than their arguments.
func estimate(name string, args []cty.Value, limit int64) int64 {
	if smallResult[name] {
		return 0
	}
	var total int64
	sizes := make([]int64, len(args))
	for i, a := range args {
		sizes[i], _ = measure(a, limit)
		total = sat(total + sizes[i])
	}
	str := func(i int) string {
		if i >= len(args) {
			return ""
		}
		v, _ := args[i].Unmark()
		if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
			return ""
		}
		return v.AsString()
	}
	length := func(i int) int64 {
		if i >= len(args) {
			return 0
		}
		v, _ := args[i].Unmark()
		if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
			return 1
		}
		return int64(v.LengthInt())
	}
	switch name {
	case "indent": // indent(spaces, str): spaces on every line
		spaces := int64(0)
		if v, _ := args[0].Unmark(); v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
			if f, _ := v.AsBigFloat().Float64(); f > 0 {
				spaces = int64(min(f, 1<<40))
			}
		}
		return sat(total + mulSat(spaces, int64(strings.Count(str(1), "\n")+1)))
	case "join": // join(sep, lists...): sep between every element
		elems := int64(0)
		for i := 1; i < len(args); i++ {
			elems = sat(elems + length(i))
		}
		return sat(total + mulSat(int64(len(str(0))), elems))
	case "replace", "regex_replace": // (str, search, replacement): at worst between every byte
		return sat(total + mulSat(int64(len(str(0))+1), int64(len(str(2)))))
	case "format", "formatlist": // widths in the format; formatlist repeats it per element
		out := sat(total + widths(str(0)))
		if name == "formatlist" {
			n := int64(1)
			for i := 1; i < len(args); i++ {
				n = max(n, length(i))
			}
			out = mulSat(out, n)
		}
		return out
	case "setproduct": // one element per combination
		n := int64(costEntry * max(len(args), 1))
		for i := range args {
			n = mulSat(n, length(i))
		}
		return sat(total + n)
	}
	return total
}

// widths adds up the numbers in a format string: the widths and
// precisions its verbs pad to, at most.
func widths(format string) int64 {
	var total, n int64
	for i := 0; i <= len(format); i++ {
		if i < len(format) && format[i] >= '0' && format[i] <= '9' {
			n = sat(n*10 + int64(format[i]-'0'))
			continue
		}
		total = sat(total + n)
		n = 0
	}
	return total
}

// ceiling is where sizes saturate: a petabyte, far over any budget and
// far from overflowing.
const ceiling = 1 << 50

// sat saturates a size at ceiling.
func sat(n int64) int64 {
	if n > ceiling || n < 0 {
		return ceiling
	}
	return n
}

// mulSat is a*b for sizes, saturated at ceiling.
func mulSat(a, b int64) int64 {
	a, b = sat(a), sat(b)
	if a != 0 && b > ceiling/a {
		return ceiling
	}
	return a * b
}
