package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// ConfigKey names a key of a task's driver config block in a job file:
// its group, its task, and its path in the block as the plugin SDK names
// fields (plugins/base): "image", "auth.username" (a block written once),
// "mount[1].target" (the second mount block), "labels.team" (a key of a
// map). The config block itself has the empty Field.
type ConfigKey struct {
	Group, Task, Field string
}

// Position is a place in a job file; Line and Column are 1-based.
type Position struct {
	Filename     string
	Line, Column int
}

// String formats the position as "file:line:col".
func (p Position) String() string {
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// ConfigPositions returns where the keys of the tasks' config blocks are
// in an HCL job file, for messages about a task's driver config
// (ConfigPosition). It reads the file's syntax only; call it on a file
// Parse accepted, whose input limits then bound its work. It returns nil
// for a JSON job file or a file that does not parse.
func ConfigPositions(filename string, src []byte) map[ConfigKey]Position {
	if isJSON(filename, src) {
		return nil
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	out := map[ConfigKey]Position{}
	for _, job := range blocksNamed(body, "job") {
		for _, g := range blocksNamed(job.Body, "group") {
			if len(g.Labels) != 1 {
				continue
			}
			for _, t := range blocksNamed(g.Body, "task") {
				if len(t.Labels) != 1 {
					continue
				}
				for _, c := range blocksNamed(t.Body, "config") {
					key := ConfigKey{Group: g.Labels[0], Task: t.Labels[0]}
					out[key] = position(c.TypeRange)
					recordBody(out, key, []string{""}, c.Body)
				}
			}
		}
	}
	return out
}

// ConfigPosition returns the position of a config key in positions (from
// ConfigPositions): the key's own, or else that of the nearest enclosing
// block it could find (for a missing field, the block that lacks it).
func ConfigPosition(positions map[ConfigKey]Position, key ConfigKey) (Position, bool) {
	for {
		if p, ok := positions[key]; ok {
			return p, true
		}
		if key.Field == "" {
			return Position{}, false
		}
		key.Field = parentField(key.Field)
	}
}

// parentField drops the last element of a field path: "mount[1].target"
// -> "mount[1]" -> "mount" -> "".
func parentField(f string) string {
	for i := len(f) - 1; i >= 0; i-- {
		switch f[i] {
		case '.':
			return f[:i]
		case '[':
			return f[:i]
		}
	}
	return ""
}

// recordBody records the attributes and blocks of body under each of
// prefixes (the paths its block is known by: "mount[0]" and "mount").
func recordBody(out map[ConfigKey]Position, key ConfigKey, prefixes []string, body *hclsyntax.Body) {
	join := func(prefix, name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	for name, attr := range body.Attributes {
		var paths []string
		for _, p := range prefixes {
			paths = append(paths, join(p, name))
		}
		for _, p := range paths {
			k := key
			k.Field = p
			out[k] = position(attr.NameRange)
		}
		recordObject(out, key, paths, attr.Expr)
	}
	seen := map[string]int{}
	for _, b := range body.Blocks {
		i := seen[b.Type]
		seen[b.Type]++
		var paths []string
		for _, p := range prefixes {
			paths = append(paths, fmt.Sprintf("%s[%d]", join(p, b.Type), i))
			if i == 0 {
				paths = append(paths, join(p, b.Type))
			}
		}
		// A labelled block nests under its labels, as the decoder puts it.
		for _, l := range b.Labels {
			var nested []string
			for _, p := range paths {
				nested = append(nested, join(p, l)+"[0]", join(p, l))
			}
			paths = nested
		}
		for _, p := range paths {
			k := key
			k.Field = p
			if _, dup := out[k]; !dup {
				out[k] = position(b.TypeRange)
			}
		}
		recordBody(out, key, paths, b.Body)
	}
}

// recordObject records the keys of an object written as a value
// (labels = { team = "x" }) under paths.
func recordObject(out map[ConfigKey]Position, key ConfigKey, paths []string, expr hclsyntax.Expression) {
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return
	}
	for _, item := range obj.Items {
		name := hcl.ExprAsKeyword(item.KeyExpr)
		if name == "" {
			v, diags := item.KeyExpr.Value(nil)
			if diags.HasErrors() || !v.IsKnown() || v.IsNull() || !v.Type().Equals(cty.String) {
				continue
			}
			name = v.AsString()
		}
		var nested []string
		for _, p := range paths {
			nested = append(nested, p+"."+name)
		}
		for _, p := range nested {
			k := key
			k.Field = p
			out[k] = position(item.KeyExpr.Range())
		}
		recordObject(out, key, nested, item.ValueExpr)
	}
}

// blocksNamed returns the blocks of body of the given type.
func blocksNamed(body *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

func position(r hcl.Range) Position {
	return Position{Filename: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}
