package rawexec

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestTaskConfigSchemaMatchesType: every option the driver decodes is in
// its schema (so that jobs are checked against it when submitted), and
// nothing else is; the schema itself is well formed.
func TestTaskConfigSchemaMatchesType(t *testing.T) {
	s := TaskConfigSchema()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	var schema, fields []string
	for _, f := range s.Fields {
		schema = append(schema, f.Name)
	}
	typ := reflect.TypeFor[TaskConfig]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	slices.Sort(schema)
	slices.Sort(fields)
	if !slices.Equal(schema, fields) {
		t.Errorf("schema fields %q, TaskConfig fields %q", schema, fields)
	}
	// A usual config block passes.
	if err := s.ValidateSubmitted(Name, json.RawMessage(`{"command":"/bin/true","args":["a"]}`)); err != nil {
		t.Fatal(err)
	}
}
