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
)

// Schema describes a plugin's config block: a flat list of fields. It is
// deliberately small so that it crosses the wire and plugins in any language
// can produce it.
type Schema struct {
	Fields []*Field
}

// Field is one config field.
type Field struct {
	Name     string
	Type     FieldType
	Required bool
	// Default is the value (JSON) used when the field is absent; nil: none.
	Default     json.RawMessage
	Description string
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
	}
	return errors.Join(errs...)
}

// Validate checks a plugin's config block (a JSON object; nil or empty is
// an empty block) against the schema and returns it with the defaults of
// absent fields filled in. Every problem is reported, each as a
// *ConfigError naming plugin and field. A nil schema accepts any object.
func (s *Schema) Validate(plugin string, raw json.RawMessage) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return nil, &ConfigError{Plugin: plugin, Err: errors.New("must be an object of fields")}
		}
	}
	if s == nil {
		return json.Marshal(obj)
	}
	var errs []error
	known := make(map[string]*Field, len(s.Fields))
	for _, f := range s.Fields {
		known[f.Name] = f
	}
	for _, name := range sortedKeys(obj) {
		if _, ok := known[name]; !ok {
			errs = append(errs, &ConfigError{Plugin: plugin, Field: name,
				Err: fmt.Errorf("unknown field; known fields: %s", strings.Join(s.names(), ", "))})
		}
	}
	for _, f := range s.Fields {
		v, ok := obj[f.Name]
		switch {
		case ok:
			if err := f.Type.check(v); err != nil {
				errs = append(errs, &ConfigError{Plugin: plugin, Field: f.Name, Err: err})
			}
		case f.Required:
			errs = append(errs, &ConfigError{Plugin: plugin, Field: f.Name, Err: errors.New("required field is missing")})
		case f.Default != nil:
			obj[f.Name] = f.Default
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return json.Marshal(obj)
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
	case TypeString, TypeBool, TypeInt, TypeFloat, TypeDuration, TypeStringList, TypeStringMap:
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
