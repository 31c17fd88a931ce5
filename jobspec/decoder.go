package jobspec

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// decoder holds the state of one parse: the source (to recover the text of
// references kept literally), the evaluation context (var.*, local.*,
// functions) and the diagnostics found so far. Decoding goes on after an
// error so that one parse reports as many problems as it can.
type decoder struct {
	src   []byte
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
	// budget meters what the file's expressions compute (budget.go); the
	// functions of ctx charge it too.
	budget *budget
	// groupless: a job without a group is no error (inputs.groupless).
	groupless bool
}

func (d *decoder) add(diags ...*hcl.Diagnostic) {
	d.diags = append(d.diags, diags...)
}

func (d *decoder) errorf(r hcl.Range, summary, format string, args ...any) {
	d.add(errorAt(r, summary, fmt.Sprintf(format, args...)))
}

// content checks body against the schema and returns what it holds. Unknown
// arguments and blocks are reported with their position.
func (d *decoder) content(body hcl.Body, attrs []string, blocks ...hcl.BlockHeaderSchema) *hcl.BodyContent {
	schema := &hcl.BodySchema{Blocks: blocks}
	for _, a := range attrs {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: a})
	}
	c, diags := body.Content(schema)
	d.add(diags...)
	return c
}

// single returns the only block of type typ in c, or nil; a second one is an
// error.
func (d *decoder) single(c *hcl.BodyContent, typ string) *hcl.Block {
	var found *hcl.Block
	for _, b := range c.Blocks {
		if b.Type != typ {
			continue
		}
		if found != nil {
			d.errorf(b.DefRange, "Duplicate "+typ+" block",
				"Only one %s block is allowed here; another was defined at %s.", typ, lineCol1(found.DefRange))
			continue
		}
		found = b
	}
	return found
}

// blocksOf returns the blocks of type typ in c, in source order.
func blocksOf(c *hcl.BodyContent, typ string) []*hcl.Block {
	var out []*hcl.Block
	for _, b := range c.Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

// eval evaluates expr, keeping references to runtime variables literally.
// It returns cty.NilVal after reporting an error; a null value means the
// attribute is treated as unset.
func (d *decoder) eval(expr hcl.Expression) cty.Value {
	return d.evalIn(expr, d.ctx, knownRoots(d.ctx))
}

// evalIn evaluates expr in ctx, keeping references to names other than
// known literally (nil: none), metered by the decoder's budget. The value
// is charged too: it is kept, in the job or in a variable.
func (d *decoder) evalIn(expr hcl.Expression, ctx *hcl.EvalContext, known map[string]bool) cty.Value {
	if se, ok := expr.(hclsyntax.Expression); ok {
		expr = keepLiteral(se, d.src, known, d.budget)
	}
	v, diags := expr.Value(ctx)
	d.add(diags...)
	if diags.HasErrors() {
		return cty.NilVal
	}
	if diag := d.budget.chargeValue(v, expr.Range()); diag != nil {
		d.add(diag)
		return cty.NilVal
	}
	if !v.IsWhollyKnown() {
		d.errorf(expr.Range(), "Unknown value", "The value of this expression cannot be known when the job file is parsed.")
		return cty.NilVal
	}
	v, _ = v.UnmarkDeep()
	return v
}

// knownRoots are the variable names HCL resolves itself.
func knownRoots(ctx *hcl.EvalContext) map[string]bool {
	known := make(map[string]bool, len(ctx.Variables))
	for name := range ctx.Variables {
		known[name] = true
	}
	return known
}

// typed evaluates attr and converts it to ty, reporting a mismatch at the
// attribute's value. ok is false when the attribute is absent, null or wrong.
func (d *decoder) typed(attr *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	if attr == nil {
		return cty.NilVal, false
	}
	v := d.eval(attr.Expr)
	if v == cty.NilVal || v.IsNull() {
		return cty.NilVal, false
	}
	if diag := d.budget.chargeConversion(v, attr.Expr.Range()); diag != nil {
		d.add(diag)
		return cty.NilVal, false
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		d.errorf(attr.Expr.Range(), "Invalid value for \""+attr.Name+"\"", "%s required, got %s.", typeName(ty), v.Type().FriendlyName())
		return cty.NilVal, false
	}
	return cv, true
}

func typeName(ty cty.Type) string {
	switch {
	case ty == cty.String:
		return "a string is"
	case ty == cty.Number:
		return "a number is"
	case ty == cty.Bool:
		return "a bool is"
	case ty.IsListType():
		return "a list of " + ty.ElementType().FriendlyName() + " is"
	case ty.IsMapType():
		return "a map of " + ty.ElementType().FriendlyName() + " is"
	default:
		return ty.FriendlyName() + " is"
	}
}

// str decodes a string attribute; nil when absent.
func (d *decoder) str(attr *hcl.Attribute) *string {
	v, ok := d.typed(attr, cty.String)
	if !ok {
		return nil
	}
	s := v.AsString()
	return &s
}

// strVal decodes a string attribute; "" when absent.
func (d *decoder) strVal(attr *hcl.Attribute) string {
	if s := d.str(attr); s != nil {
		return *s
	}
	return ""
}

// boolean decodes a bool attribute; nil when absent.
func (d *decoder) boolean(attr *hcl.Attribute) *bool {
	v, ok := d.typed(attr, cty.Bool)
	if !ok {
		return nil
	}
	b := v.True()
	return &b
}

// integer decodes a whole-number attribute; nil when absent.
func (d *decoder) integer(attr *hcl.Attribute) *int {
	v, ok := d.typed(attr, cty.Number)
	if !ok {
		return nil
	}
	bf := v.AsBigFloat()
	i, acc := bf.Int64()
	if acc != big.Exact || i > math.MaxInt32 || i < math.MinInt32 {
		d.errorf(attr.Expr.Range(), "Invalid value for \""+attr.Name+"\"", "A whole number is required, got %s.", bf.Text('g', -1))
		return nil
	}
	n := int(i)
	return &n
}

// nonNegative decodes a whole number that must not be negative.
func (d *decoder) nonNegative(attr *hcl.Attribute) *int {
	n := d.integer(attr)
	if n != nil && *n < 0 {
		d.errorf(attr.Expr.Range(), "Invalid value for \""+attr.Name+"\"", "%q must not be negative, got %d.", attr.Name, *n)
		return nil
	}
	return n
}

// duration decodes a Go duration string ("30s", "1h30m"); nil when absent.
func (d *decoder) duration(attr *hcl.Attribute) *time.Duration {
	v, ok := d.typed(attr, cty.String)
	if !ok {
		return nil
	}
	dur, err := time.ParseDuration(v.AsString())
	if err != nil {
		d.errorf(attr.Expr.Range(), "Invalid duration for \""+attr.Name+"\"",
			"%q is not a duration; use a number with a unit, such as \"30s\" or \"1h30m\".", v.AsString())
		return nil
	}
	if dur < 0 {
		d.errorf(attr.Expr.Range(), "Invalid duration for \""+attr.Name+"\"", "%q must not be negative.", v.AsString())
		return nil
	}
	return &dur
}

// strList decodes a list of strings; nil when absent.
func (d *decoder) strList(attr *hcl.Attribute) []string {
	v, ok := d.typed(attr, cty.List(cty.String))
	if !ok {
		return nil
	}
	out := make([]string, 0, v.LengthInt())
	for _, e := range v.AsValueSlice() {
		if e.IsNull() {
			d.errorf(attr.Expr.Range(), "Invalid value for \""+attr.Name+"\"", "The list must not contain null.")
			return nil
		}
		out = append(out, e.AsString())
	}
	return out
}

// strMap decodes a map of strings; nil when absent.
func (d *decoder) strMap(attr *hcl.Attribute) map[string]string {
	v, ok := d.typed(attr, cty.Map(cty.String))
	if !ok {
		return nil
	}
	out := make(map[string]string, v.LengthInt())
	for k, e := range v.AsValueMap() {
		if e.IsNull() {
			continue
		}
		out[k] = e.AsString()
	}
	return out
}

// attrsMap decodes a block whose body is only string-valued arguments, such
// as `meta { k = "v" }` or `env { K = "v" }`.
func (d *decoder) attrsMap(body hcl.Body) map[string]string {
	attrs, diags := body.JustAttributes()
	d.add(diags...)
	out := make(map[string]string, len(attrs))
	for _, attr := range sortedHCLAttrs(attrs) {
		if s := d.str(attr); s != nil {
			out[attr.Name] = *s
		}
	}
	return out
}

// stringMap decodes a map that may be written either as a block
// (`meta { k = "v" }`) or as an argument (`meta = { k = "v" }`).
func (d *decoder) stringMap(c *hcl.BodyContent, name string) map[string]string {
	attr := c.Attributes[name]
	block := d.single(c, name)
	switch {
	case attr != nil && block != nil:
		d.errorf(block.DefRange, "Duplicate "+name,
			"%s is set both as an argument at %s and as a block; use one of them.", name, lineCol1(attr.NameRange))
		return nil
	case block != nil:
		return d.attrsMap(block.Body)
	case attr != nil:
		return d.strMap(attr)
	default:
		return nil
	}
}

// goValue converts a cty value to plain Go values that encode to JSON:
// string, bool, int64 or float64, []any and map[string]any. Null is nil.
func goValue(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Bool:
		return v.True()
	case ty == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact {
			return i
		}
		f, _ := bf.Float64()
		return f
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		out := make([]any, 0, v.LengthInt())
		for _, e := range v.AsValueSlice() {
			out = append(out, goValue(e))
		}
		return out
	case ty.IsMapType() || ty.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for k, e := range v.AsValueMap() {
			if e.IsNull() {
				continue
			}
			out[k] = goValue(e)
		}
		return out
	default:
		return nil
	}
}
