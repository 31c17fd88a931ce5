package jobspec

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// This file decodes the blocks of Nomad features that drover does not
// implement yet (service, network, update, ...) into the JSON shape of
// Nomad's API, so that they reach the api.Job's json.RawMessage fields and
// a later change can implement them without touching the parser. Each
// block is described by a rawSpec: its arguments with their JSON names and
// kinds, and its nested blocks.

// rawKind is how an argument of a raw block is decoded.
type rawKind int

const (
	rawString    rawKind = iota // string
	rawInt                      // whole number
	rawBool                     // bool
	rawStrings                  // list of strings
	rawStringMap                // map of strings
	rawDuration                 // Go duration string, encoded as nanoseconds
	rawAny                      // any value, as its JSON form
)

// rawAttr is one argument of a raw block.
type rawAttr struct {
	key  string // JSON field name
	kind rawKind
}

// rawBlock is one nested block type of a raw block.
type rawBlock struct {
	key   string // JSON field name in the parent
	many  bool   // repeated blocks make a list
	keyed bool   // repeated blocks make an object keyed by label
	label string // JSON field the block's label goes to; "" when unlabeled
	spec  *rawSpec
	// strMap: the body is `k = "v"` arguments, a map of strings.
	strMap bool
	// freeform: the body is arbitrary, decoded as a driver config is.
	freeform bool
	// constraint: the body is a constraint block.
	constraint bool
	// unsupported: the block is rejected as not supported yet.
	unsupported bool
}

// rawSpec describes the body of a raw block.
type rawSpec struct {
	attrs  map[string]rawAttr
	blocks map[string]rawBlock
	// post adjusts the decoded object (defaults, reshaping).
	post func(obj map[string]any)
}

// headers are the block header schemas of blocks.
func headers(blocks map[string]rawBlock) []hcl.BlockHeaderSchema {
	out := make([]hcl.BlockHeaderSchema, 0, len(blocks))
	for typ, b := range blocks {
		h := hcl.BlockHeaderSchema{Type: typ}
		if b.label != "" {
			h.LabelNames = []string{"name"}
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// rawObject decodes a raw block's body into a JSON-ready object.
func (d *decoder) rawObject(body hcl.Body, spec *rawSpec) map[string]any {
	attrNames := make([]string, 0, len(spec.attrs))
	for name := range spec.attrs {
		attrNames = append(attrNames, name)
	}
	sort.Strings(attrNames)
	c := d.content(body, attrNames, headers(spec.blocks)...)
	obj := map[string]any{}
	for _, at := range sortedHCLAttrs(c.Attributes) {
		a := spec.attrs[at.Name]
		if v := d.rawValue(at, a.kind); v != nil {
			obj[a.key] = v
		}
	}
	for _, b := range c.Blocks {
		d.addRawBlock(obj, b, spec.blocks[b.Type])
	}
	if spec.post != nil {
		spec.post(obj)
	}
	return obj
}

// addRawBlock decodes block b as described by bs and stores it in obj.
func (d *decoder) addRawBlock(obj map[string]any, b *hcl.Block, bs rawBlock) {
	if bs.unsupported {
		d.unsupported(b)
		return
	}
	var val any
	switch {
	case bs.constraint:
		c := d.constraint(b)
		if c == nil {
			return
		}
		val = c
	case bs.strMap:
		val = d.attrsMap(b.Body)
	case bs.freeform:
		val = d.freeform(b.Body)
	default:
		o := d.rawObject(b.Body, bs.spec)
		if bs.label != "" && len(b.Labels) > 0 {
			o[bs.label] = b.Labels[0]
		}
		val = o
	}
	switch {
	case bs.keyed:
		m, _ := obj[bs.key].(map[string]any)
		if m == nil {
			m = map[string]any{}
			obj[bs.key] = m
		}
		if _, dup := m[b.Labels[0]]; dup {
			d.errorf(b.LabelRanges[0], "Duplicate "+b.Type+" block", "A %s named %q is already defined.", b.Type, b.Labels[0])
			return
		}
		m[b.Labels[0]] = val
	case bs.many:
		list, _ := obj[bs.key].([]any)
		obj[bs.key] = append(list, val)
	default:
		if _, dup := obj[bs.key]; dup {
			d.errorf(b.DefRange, "Duplicate "+b.Type+" block", "Only one %s block is allowed here.", b.Type)
			return
		}
		obj[bs.key] = val
	}
}

// rawValue decodes one argument of a raw block; nil when unset or invalid.
func (d *decoder) rawValue(at *hcl.Attribute, kind rawKind) any {
	switch kind {
	case rawString:
		if s := d.str(at); s != nil {
			return *s
		}
	case rawInt:
		if n := d.integer(at); n != nil {
			return *n
		}
	case rawBool:
		if b := d.boolean(at); b != nil {
			return *b
		}
	case rawStrings:
		if l := d.strList(at); l != nil {
			return l
		}
	case rawStringMap:
		if m := d.strMap(at); m != nil {
			return m
		}
	case rawDuration:
		if dur := d.duration(at); dur != nil {
			return int64(*dur)
		}
	case rawAny:
		v := d.eval(at.Expr)
		if v.IsNull() {
			return nil
		}
		if gv := goValue(v); jsonSafe(gv) {
			return gv
		}
		d.errorf(at.Expr.Range(), "Invalid number", "Numbers must be finite.")
	}
	return nil
}

// rawBlocks decodes every block of type typ in c and returns their JSON
// (a list, an object keyed by label, or one object, as bs says); nil when
// there is none.
func (d *decoder) rawBlocks(c *hcl.BodyContent, typ string, bs rawBlock) json.RawMessage {
	holder := map[string]any{}
	for _, b := range blocksOf(c, typ) {
		d.addRawBlock(holder, b, bs)
	}
	v, ok := holder[bs.key]
	if !ok {
		return nil
	}
	return d.toJSON(v, blocksOf(c, typ)[0].DefRange)
}

// rawArg decodes one argument into JSON; nil when absent.
func (d *decoder) rawArg(c *hcl.BodyContent, name string, kind rawKind) json.RawMessage {
	at := c.Attributes[name]
	if at == nil {
		return nil
	}
	v := d.rawValue(at, kind)
	if v == nil {
		return nil
	}
	return d.toJSON(v, at.Expr.Range())
}

// toJSON encodes a decoded value; rng is where to report a failure, which
// the checks made while decoding should rule out.
func (d *decoder) toJSON(v any, rng hcl.Range) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		d.errorf(rng, "Invalid value", "Cannot encode the value as JSON: %v.", err)
		return nil
	}
	return b
}

// unsupported reports a block of a Nomad feature that drover rejects.
func (d *decoder) unsupported(b *hcl.Block) {
	d.add(errorAt(b.DefRange, fmt.Sprintf("%q is not supported by drover yet", b.Type),
		"Remove the block; drover cannot run this job as Nomad would."))
}
