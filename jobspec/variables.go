package jobspec

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// inputs are variable values given from outside the job file.
type inputs struct {
	// file is the content of a variable file (`name = value` lines).
	file string
	// flags are -var name=value pairs; values are parsed according to the
	// variable's type (a string variable takes the text as it is).
	flags map[string]string
}

// declared is one `variable "name" {}` block.
type declared struct {
	name  string
	ty    cty.Type
	value cty.Value // the default, then overridden by inputs
	rng   hcl.Range
	// failed: a value was given but was invalid (already reported); the
	// variable reads as null so that its uses do not report it again.
	failed bool
}

// variables declares the job file's variables, applies the inputs and
// returns the value of `var`.
func (d *decoder) variables(c *hcl.BodyContent, in inputs) cty.Value {
	decls := map[string]*declared{}
	declare := func(v *declared) {
		if prev, dup := decls[v.name]; dup {
			d.errorf(v.rng, "Duplicate variable", "Variable %q is already declared at %s.", v.name, lineCol1(prev.rng))
			return
		}
		decls[v.name] = v
	}
	for _, b := range blocksOf(c, "variable") {
		declare(d.variableBlock(b))
	}
	for _, b := range blocksOf(c, "variables") {
		attrs, diags := b.Body.JustAttributes()
		d.add(diags...)
		for _, at := range sortedHCLAttrs(attrs) {
			declare(&declared{name: at.Name, ty: cty.DynamicPseudoType, value: d.constant(at.Expr), rng: at.NameRange})
		}
	}

	if in.file != "" {
		d.varFile(in.file, decls)
	}
	names := make([]string, 0, len(in.flags))
	for name := range in.flags {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, ok := decls[name]
		if !ok {
			d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable",
				Detail: "A value was given for variable \"" + name + "\", but the job file does not declare it."})
			continue
		}
		if val := d.flagValue(name, in.flags[name], v.ty); val != cty.NilVal {
			v.value = val
		} else {
			v.failed = true
		}
	}

	vals := make(map[string]cty.Value, len(decls))
	for name, v := range decls {
		if v.failed {
			vals[name] = cty.NullVal(v.ty)
			continue
		}
		if v.value == cty.NilVal {
			d.errorf(v.rng, "Missing value for variable", "Variable %q has no default; give it one or pass a value (-var %s=...).", name, name)
			continue
		}
		if diag := d.budget.chargeConversion(v.value, v.rng); diag != nil {
			d.add(diag)
			vals[name] = cty.NullVal(v.ty)
			continue
		}
		cv, err := convert.Convert(v.value, v.ty)
		if err != nil {
			d.errorf(v.rng, "Invalid value for variable", "Variable %q: %v.", name, err)
			vals[name] = cty.NullVal(v.ty)
			continue
		}
		vals[name] = cv
	}
	return cty.ObjectVal(vals)
}

// variableBlock decodes `variable "name" { type, default, description }`.
func (d *decoder) variableBlock(b *hcl.Block) *declared {
	c := d.content(b.Body, []string{"type", "default", "description", "sensitive", "nullable"},
		hcl.BlockHeaderSchema{Type: "validation"})
	for _, vb := range blocksOf(c, "validation") {
		d.unsupported(vb)
	}
	v := &declared{name: b.Labels[0], ty: cty.DynamicPseudoType, rng: b.DefRange}
	if at := c.Attributes["type"]; at != nil {
		ty, diags := typeexpr.TypeConstraint(at.Expr)
		d.add(diags...)
		if !diags.HasErrors() {
			v.ty = ty
		}
	}
	if at := c.Attributes["default"]; at != nil {
		v.value = d.constant(at.Expr)
	}
	d.str(c.Attributes["description"])
	d.boolean(c.Attributes["sensitive"])
	d.boolean(c.Attributes["nullable"])
	return v
}

// constant evaluates an expression that may not refer to variables.
func (d *decoder) constant(expr hcl.Expression) cty.Value {
	return d.evalIn(expr, &hcl.EvalContext{Functions: d.ctx.Functions}, nil)
}

// varFile applies the values of a variable file.
func (d *decoder) varFile(src string, decls map[string]*declared) {
	if err := checkSource("variables.hcl", []byte(src), false); err != nil {
		d.add(limitDiag(err))
		return
	}
	f, diags := hclsyntax.ParseConfig([]byte(src), "variables.hcl", hcl.InitialPos)
	d.add(diags...)
	if diags.HasErrors() {
		return
	}
	attrs, diags := f.Body.JustAttributes()
	d.add(diags...)
	for _, at := range sortedHCLAttrs(attrs) {
		v, ok := decls[at.Name]
		if !ok {
			d.errorf(at.NameRange, "Undeclared variable", "A value was given for variable %q, but the job file does not declare it.", at.Name)
			continue
		}
		if val := d.constant(at.Expr); val != cty.NilVal {
			v.value = val
		} else {
			v.failed = true
		}
	}
}

// flagValue parses a -var value: the text itself for strings, an HCL
// expression for other types.
func (d *decoder) flagValue(name, raw string, ty cty.Type) cty.Value {
	if ty == cty.String || ty == cty.DynamicPseudoType {
		return cty.StringVal(raw)
	}
	bad := func() cty.Value {
		d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
			Detail: fmt.Sprintf("-var %s=%s: %q is not a valid %s.", name, raw, raw, ty.FriendlyName())})
		return cty.NilVal
	}
	if err := checkSource("-var "+name, []byte(raw), false); err != nil {
		d.add(limitDiag(err))
		return cty.NilVal
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), "-var "+name, hcl.InitialPos)
	if diags.HasErrors() {
		return bad()
	}
	v, diags := keepLiteral(expr, nil, nil, d.budget).Value(&hcl.EvalContext{Functions: d.ctx.Functions})
	if diags.HasErrors() {
		return bad()
	}
	if diag := d.budget.chargeValue(v, expr.Range()); diag != nil {
		d.add(diag)
		return cty.NilVal
	}
	return v
}

// locals evaluates every `locals {}` block and returns the value of
// `local`. Locals may refer to variables and to each other, in any order.
func (d *decoder) locals(c *hcl.BodyContent) cty.Value {
	pending := map[string]*hcl.Attribute{}
	var order []*hcl.Attribute
	for _, b := range blocksOf(c, "locals") {
		attrs, diags := b.Body.JustAttributes()
		d.add(diags...)
		for _, at := range sortedHCLAttrs(attrs) {
			if prev, dup := pending[at.Name]; dup {
				d.errorf(at.NameRange, "Duplicate local value", "Local %q is already defined at %s.", at.Name, lineCol1(prev.NameRange))
				continue
			}
			pending[at.Name] = at
			order = append(order, at)
		}
	}
	vals := map[string]cty.Value{}
	for len(pending) > 0 {
		progress := false
		for _, at := range order {
			if pending[at.Name] == nil || !localsReady(at.Expr, pending) {
				continue
			}
			delete(pending, at.Name)
			progress = true
			d.ctx.Variables["local"] = cty.ObjectVal(vals)
			if v := d.eval(at.Expr); v != cty.NilVal {
				vals[at.Name] = v
			}
		}
		if !progress {
			for _, at := range order {
				if pending[at.Name] != nil {
					d.errorf(at.NameRange, "Circular local value", "Local %q refers to itself through other locals.", at.Name)
				}
			}
			break
		}
	}
	return cty.ObjectVal(vals)
}

// localsReady reports whether expr refers to no local still pending.
func localsReady(expr hcl.Expression, pending map[string]*hcl.Attribute) bool {
	for _, tr := range expr.Variables() {
		if tr.RootName() != "local" || len(tr) < 2 {
			continue
		}
		if attr, ok := tr[1].(hcl.TraverseAttr); ok && pending[attr.Name] != nil {
			return false
		}
	}
	return true
}
