package jobspec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// inputs are variable values given from outside the job file. Later
// sources win: env, then files in order, then flags.
type inputs struct {
	// env are the NOMAD_VAR_<name> environment variables, by name; values
	// are parsed as flags' are. A name the job file does not declare is
	// ignored (the environment is not aimed at one job file).
	env map[string]string
	// files are variable files (`name = value` lines, or a JSON object
	// when the name ends in ".json").
	files []VarFile
	// flags are -var name=value pairs; values are parsed according to the
	// variable's type (a string variable takes the text as it is).
	flags map[string]string
	// fs enables the functions that read local files.
	fs bool
	// groupless accepts a job without a group, as the API's parse does
	// (Nomad's /v1/jobs/parse): registering it is refused later.
	groupless bool
}

// VarFile is a variable file's name (for messages, and ".json" for the
// JSON form) and content.
type VarFile struct {
	Name    string
	Content []byte
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
	// validations are the variable's validation blocks.
	validations []validation
}

// validation is one `validation { condition, error_message }` block.
type validation struct {
	condition hcl.Expression
	message   hcl.Expression
	rng       hcl.Range
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

	for _, name := range sortedKeys(in.env) {
		v, ok := decls[name]
		if !ok {
			continue
		}
		if val := d.flagValue("NOMAD_VAR_"+name, in.env[name], v.ty); val != cty.NilVal {
			v.value, v.failed = val, false
		} else {
			v.failed = true
		}
	}
	for _, f := range in.files {
		d.varFile(f, decls)
	}
	for _, name := range sortedKeys(in.flags) {
		v, ok := decls[name]
		if !ok {
			d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable",
				Detail: "A value was given for variable \"" + name + "\", but the job file does not declare it."})
			continue
		}
		if val := d.flagValue("-var "+name, in.flags[name], v.ty); val != cty.NilVal {
			v.value, v.failed = val, false
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
	out := cty.ObjectVal(vals)
	d.validate(decls, vals, out)
	return out
}

// validate checks the validation blocks of the variables that have a
// value: a condition that is false is an error with its message, at the
// condition.
func (d *decoder) validate(decls map[string]*declared, vals map[string]cty.Value, all cty.Value) {
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": all}, Functions: d.ctx.Functions}
	for _, name := range sortedKeys(decls) {
		v := decls[name]
		if _, ok := vals[name]; !ok || v.failed {
			continue
		}
		for _, vb := range v.validations {
			cond := d.evalIn(vb.condition, ctx, nil)
			if cond == cty.NilVal {
				continue
			}
			ok, err := convert.Convert(cond, cty.Bool)
			if err != nil || ok.IsNull() {
				d.errorf(vb.condition.Range(), "Invalid validation condition", "The condition of variable %q must be true or false.", name)
				continue
			}
			if ok.True() {
				continue
			}
			msg := fmt.Sprintf("The value of variable %q is not valid.", name)
			if vb.message != nil {
				if m := d.evalIn(vb.message, ctx, nil); m != cty.NilVal && !m.IsNull() && m.Type() == cty.String {
					msg = m.AsString()
				}
			}
			d.errorf(vb.condition.Range(), "Invalid value for variable", "%s (variable %q, validation at %s)", msg, name, lineCol1(vb.rng))
		}
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// variableBlock decodes `variable "name" { type, default, description }`.
func (d *decoder) variableBlock(b *hcl.Block) *declared {
	c := d.content(b.Body, []string{"type", "default", "description", "sensitive", "nullable"},
		hcl.BlockHeaderSchema{Type: "validation"})
	v := &declared{name: b.Labels[0], ty: cty.DynamicPseudoType, rng: b.DefRange}
	for _, vb := range blocksOf(c, "validation") {
		vc := d.content(vb.Body, []string{"condition", "error_message"})
		cond := vc.Attributes["condition"]
		if cond == nil {
			d.errorf(vb.DefRange, "Missing condition", "A validation block needs condition, an expression of var.%s that is true when the value is valid.", v.name)
			continue
		}
		if !refersOnlyTo(cond.Expr, v.name) {
			d.errorf(cond.Expr.Range(), "Invalid validation condition", "The condition of variable %q may refer only to var.%s.", v.name, v.name)
			continue
		}
		var msg hcl.Expression
		if at := vc.Attributes["error_message"]; at != nil {
			msg = at.Expr
		}
		v.validations = append(v.validations, validation{condition: cond.Expr, message: msg, rng: vb.DefRange})
	}
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

// refersOnlyTo reports whether expr refers to no variable but var.name.
func refersOnlyTo(expr hcl.Expression, name string) bool {
	for _, tr := range expr.Variables() {
		if tr.RootName() != "var" || len(tr) < 2 {
			return false
		}
		if a, ok := tr[1].(hcl.TraverseAttr); !ok || a.Name != name {
			return false
		}
	}
	return true
}

// varFile applies the values of a variable file: HCL (`name = value`
// lines), or a JSON object when its name ends in ".json".
func (d *decoder) varFile(vf VarFile, decls map[string]*declared) {
	name := vf.Name
	if name == "" {
		name = "variables.hcl"
	}
	isJSON := strings.HasSuffix(name, ".json")
	if err := checkSource(name, vf.Content, isJSON); err != nil {
		d.add(limitDiag(err))
		return
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	if isJSON {
		f, diags = hcljson.Parse(vf.Content, name)
	} else {
		f, diags = hclsyntax.ParseConfig(vf.Content, name, hcl.InitialPos)
	}
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
			v.value, v.failed = val, false
		} else {
			v.failed = true
		}
	}
}

// flagValue parses a -var value (or a NOMAD_VAR_ one; from names it): the
// text itself for strings, an HCL expression for other types.
func (d *decoder) flagValue(from, raw string, ty cty.Type) cty.Value {
	if ty == cty.String || ty == cty.DynamicPseudoType {
		return cty.StringVal(raw)
	}
	bad := func() cty.Value {
		d.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
			Detail: fmt.Sprintf("%s=%s: %q is not a valid %s.", from, raw, raw, ty.FriendlyName())})
		return cty.NilVal
	}
	if err := checkSource(from, []byte(raw), false); err != nil {
		d.add(limitDiag(err))
		return cty.NilVal
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), from, hcl.InitialPos)
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
