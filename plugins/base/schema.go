package base

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// FieldType is the type of a config field.
type FieldType string

// The field types a Schema can describe.
const (
	TypeString     FieldType = "string"
	TypeBool       FieldType = "bool"
	TypeInt        FieldType = "int"
	TypeFloat      FieldType = "float"
	TypeDuration   FieldType = "duration" // a Go duration string: "10s"
	TypeStringList FieldType = "list(string)"
	TypeStringMap  FieldType = "map(string)"
	// TypeBlock is a block written once (`tls { ... }`): an object, or a
	// list of objects as the job and agent file parsers write a block,
	// whose fields are Field.Block. A nil Block takes any keys with
	// scalar values: a map written as a block (`labels { a = "b" }`).
	TypeBlock FieldType = "block"
	// TypeBlockList is a block written any number of times
	// (`mount { ... }`): a list of objects (or one object), each with the
	// fields of Field.Block.
	TypeBlockList FieldType = "list(block)"
)

// Schema describes a plugin's config block: a flat list of fields. It is
// deliberately small so that it crosses the wire and plugins in any language
// can produce it.
type Schema struct {
	Fields []*Field
	// Hints maps keys the plugin does not take to what to do instead:
	// options of Nomad's plugin of the same name that drover handles
	// differently or not at all. Validate reports such a key with its
	// hint rather than as unknown. Like nested fields, hints describe
	// built-in plugins and do not cross the gRPC boundary.
	Hints map[string]string
}

// Field is one config field.
type Field struct {
	Name     string
	Type     FieldType
	Required bool
	// Default is the value (JSON) used when the field is absent; nil: none.
	Default     json.RawMessage
	Description string
	// Block holds the fields of a TypeBlock or TypeBlockList field. The
	// defaults of nested fields document the plugin's defaults; Validate
	// fills in only top-level ones. Nested fields do not cross the gRPC
	// boundary: they describe built-in plugins.
	Block *Schema
}

// ConfigError is an invalid config field of a plugin.
type ConfigError struct {
	Plugin string
	Field  string
	Err    error
}

// Error names the plugin and the field.
func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("plugin %q: config: %v", e.Plugin, e.Err)
	}
	return fmt.Sprintf("plugin %q: config field %q: %v", e.Plugin, e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// Check reports whether the schema itself is well formed: named, typed,
// unique fields whose defaults have their field's type.
func (s *Schema) Check() error {
	if s == nil {
		return nil
	}
	var errs []error
	seen := make(map[string]bool, len(s.Fields))
	for i, f := range s.Fields {
		switch {
		case f == nil || f.Name == "":
			errs = append(errs, fmt.Errorf("schema field %d: missing name", i))
			continue
		case seen[f.Name]:
			errs = append(errs, fmt.Errorf("schema field %q: declared twice", f.Name))
		case !f.Type.known():
			errs = append(errs, fmt.Errorf("schema field %q: unknown type %q", f.Name, f.Type))
			continue
		case f.Required && f.Default != nil:
			errs = append(errs, fmt.Errorf("schema field %q: required fields take no default", f.Name))
		}
		seen[f.Name] = true
		if f.Default != nil {
			if err := f.Type.check(f.Default); err != nil {
				errs = append(errs, fmt.Errorf("schema field %q: default: %w", f.Name, err))
			}
		}
		if _, ok := s.Hints[f.Name]; ok {
			errs = append(errs, fmt.Errorf("schema field %q: also has a hint for keys the plugin does not take", f.Name))
		}
		if f.Block != nil {
			if !f.Type.isBlock() {
				errs = append(errs, fmt.Errorf("schema field %q: only block fields have nested fields", f.Name))
			} else if err := f.Block.Check(); err != nil {
				errs = append(errs, fmt.Errorf("schema field %q: %w", f.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Validate checks a plugin's config block (a JSON object; nil or empty is
// an empty block) against the schema and returns it with the defaults of
// absent fields filled in. Every problem is reported, each as a
// *ConfigError naming plugin and field. A nil schema accepts any object.
func (s *Schema) Validate(plugin string, raw json.RawMessage) (json.RawMessage, error) {
	obj, err := configObject(plugin, raw)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return json.Marshal(obj)
	}
	errs := s.validateObject(plugin, "", obj, validation{fill: true})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// ValidateSubmitted checks a task's config block as a submitted job holds
// it, before the client interpolates it: a null field is an unset one, and
// a string holding a ${...} reference stands for a value of any scalar
// type ("${NOMAD_META_port}" for an int), whose type the driver checks
// once the client resolved it. Defaults are not filled in. Every problem
// is reported, as with Validate.
func (s *Schema) ValidateSubmitted(plugin string, raw json.RawMessage) error {
	obj, err := configObject(plugin, raw)
	if err != nil || s == nil {
		return err
	}
	return errors.Join(s.validateObject(plugin, "", obj, validation{submitted: true})...)
}

// configObject decodes a config block: a JSON object; nil, empty or null
// for an empty block.
func configObject(plugin string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && !isNull(raw) {
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return nil, &ConfigError{Plugin: plugin, Err: errors.New("must be an object of fields")}
		}
	}
	return obj, nil
}

// validation says how validateObject checks a block.
type validation struct {
	// fill adds the defaults of absent top-level fields.
	fill bool
	// submitted checks a block before interpolation (ValidateSubmitted).
	submitted bool
}

// validateObject checks the fields of obj, whose field names are reported
// under prefix ("gc." for the fields of block gc, "mount[1]." for those
// of the second mount block).
func (s *Schema) validateObject(plugin, prefix string, obj map[string]json.RawMessage, how validation) []error {
	var errs []error
	known := make(map[string]*Field, len(s.Fields))
	for _, f := range s.Fields {
		known[f.Name] = f
	}
	if how.submitted {
		for k, v := range obj {
			if isNull(v) {
				delete(obj, k)
			}
		}
	}
	for _, name := range sortedKeys(obj) {
		if _, ok := known[name]; !ok {
			errs = append(errs, &ConfigError{Plugin: plugin, Field: prefix + name, Err: s.unknown(plugin, name)})
		}
	}
	for _, f := range s.Fields {
		v, ok := obj[f.Name]
		switch {
		case ok:
			if how.submitted && f.Type.scalar() && isReference(v) {
				continue
			}
			if err := f.Type.check(v); err != nil {
				errs = append(errs, &ConfigError{Plugin: plugin, Field: prefix + f.Name, Err: err})
			} else if f.Type.isBlock() {
				errs = append(errs, f.validateItems(plugin, prefix, v, how)...)
			}
		case f.Required:
			errs = append(errs, &ConfigError{Plugin: plugin, Field: prefix + f.Name, Err: errors.New("required field is missing")})
		case how.fill && f.Default != nil:
			obj[f.Name] = f.Default
		}
	}
	return errs
}

// validateItems checks the objects of block field f's value v. The items
// of a list of blocks are named by their index (mount[0].target), those
// of a block written once by the block's name (tls.cert).
func (f *Field) validateItems(plugin, prefix string, v json.RawMessage, how validation) []error {
	var errs []error
	items, isList := blockItems(v)
	nested := validation{submitted: how.submitted}
	for i, item := range items {
		p := prefix + f.Name + "."
		if isList && f.Type == TypeBlockList {
			p = fmt.Sprintf("%s%s[%d].", prefix, f.Name, i)
		}
		if f.Block == nil {
			errs = append(errs, checkScalars(plugin, p, item)...)
			continue
		}
		errs = append(errs, f.Block.validateObject(plugin, p, item, nested)...)
	}
	return errs
}

// unknown explains a key the schema does not have: the schema's hint for
// it, a field it is probably a typo of, or the fields there are.
func (s *Schema) unknown(plugin, name string) error {
	if hint, ok := s.Hints[name]; ok {
		return fmt.Errorf("a Nomad %s option drover does not support: %s", plugin, hint)
	}
	if near := closest(name, s.names()); near != "" {
		return fmt.Errorf("unknown field; did you mean %q?", near)
	}
	return fmt.Errorf("unknown field; known fields: %s", strings.Join(s.names(), ", "))
}

// isNull reports whether v is JSON null.
func isNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// isReference reports whether v is a string holding a ${...} reference.
func isReference(v json.RawMessage) bool {
	var s string
	return json.Unmarshal(v, &s) == nil && strings.Contains(s, "${")
}

// checkScalars reports the values of a free-form block that are not a
// string, a number or a bool.
func checkScalars(plugin, prefix string, item map[string]json.RawMessage) []error {
	var errs []error
	for _, k := range sortedKeys(item) {
		var v any
		if json.Unmarshal(item[k], &v) != nil {
			continue
		}
		switch v.(type) {
		case string, float64, bool:
		default:
			errs = append(errs, &ConfigError{Plugin: plugin, Field: prefix + k, Err: fmt.Errorf("want a string, number or bool, got %s", item[k])})
		}
	}
	return errs
}

// blockItems returns the objects of a block value that check accepted: an
// object, or a list of objects (isList).
func blockItems(v json.RawMessage) (items []map[string]json.RawMessage, isList bool) {
	var one map[string]json.RawMessage
	if json.Unmarshal(v, &one) == nil && one != nil {
		return []map[string]json.RawMessage{one}, false
	}
	var list []map[string]json.RawMessage
	_ = json.Unmarshal(v, &list)
	return list, true
}

func (s *Schema) names() []string {
	names := make([]string, 0, len(s.Fields))
	for _, f := range s.Fields {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

func (t FieldType) known() bool {
	switch t {
	case TypeString, TypeBool, TypeInt, TypeFloat, TypeDuration, TypeStringList, TypeStringMap, TypeBlock, TypeBlockList:
		return true
	}
	return false
}

func (t FieldType) isBlock() bool { return t == TypeBlock || t == TypeBlockList }

// scalar reports whether values of t are a single string, number or bool.
func (t FieldType) scalar() bool {
	switch t {
	case TypeString, TypeBool, TypeInt, TypeFloat, TypeDuration:
		return true
	}
	return false
}

// check reports whether the JSON value v has type t.
func (t FieldType) check(v json.RawMessage) error {
	want := func() error { return fmt.Errorf("want %s, got %s", t, v) }
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return want()
	}
	switch t {
	case TypeString:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return want()
		}
	case TypeBool:
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return want()
		}
	case TypeInt:
		var n json.Number
		if decodeStrict(v, &n) != nil {
			return want()
		}
		if _, err := n.Int64(); err != nil {
			return want()
		}
	case TypeFloat:
		var n json.Number
		if decodeStrict(v, &n) != nil {
			return want()
		}
		if _, err := n.Float64(); err != nil {
			return want()
		}
	case TypeDuration:
		var s string
		if json.Unmarshal(v, &s) != nil {
			return want()
		}
		if _, err := time.ParseDuration(s); err != nil {
			return fmt.Errorf("invalid duration %q: use a value like \"10s\"", s)
		}
	case TypeStringList:
		var l []string
		if json.Unmarshal(v, &l) != nil {
			return want()
		}
	case TypeStringMap:
		var m map[string]string
		if json.Unmarshal(v, &m) != nil {
			return want()
		}
	case TypeBlock, TypeBlockList:
		var one map[string]json.RawMessage
		if json.Unmarshal(v, &one) == nil && one != nil {
			return nil
		}
		var list []map[string]json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			return fmt.Errorf("want a block (an object or a list of objects), got %s", v)
		}
		for _, item := range list {
			if item == nil {
				return fmt.Errorf("want a block (an object or a list of objects), got %s", v)
			}
		}
	default:
		return fmt.Errorf("unknown type %q", t)
	}
	return nil
}

// decodeStrict decodes one JSON value into out, rejecting unknown fields
// and trailing data, and decoding numbers as json.Number.
func decodeStrict(b []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the value")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
