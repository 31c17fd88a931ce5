package base

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func testSchema() *Schema {
	return &Schema{Fields: []*Field{
		{Name: "enabled", Type: TypeBool, Default: json.RawMessage(`true`)},
		{Name: "image", Type: TypeString, Required: true},
		{Name: "count", Type: TypeInt},
		{Name: "ratio", Type: TypeFloat},
		{Name: "gc", Type: TypeDuration, Default: json.RawMessage(`"5m"`)},
		{Name: "volumes", Type: TypeStringList},
		{Name: "labels", Type: TypeStringMap},
	}}
}

func TestSchema_Validate(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		want    string   // JSON result when valid
		wantErr []string // substrings of the error
	}{
		{"defaults filled", `{"image":"x"}`, `{"enabled":true,"gc":"5m","image":"x"}`, nil},
		{"all fields", `{"image":"x","enabled":false,"count":3,"ratio":0.5,"gc":"1s","volumes":["a"],"labels":{"k":"v"}}`,
			`{"count":3,"enabled":false,"gc":"1s","image":"x","labels":{"k":"v"},"ratio":0.5,"volumes":["a"]}`, nil},
		{"missing required", `{}`, "", []string{`plugin "docker": config field "image": required field is missing`}},
		{"empty block", ``, "", []string{`field "image": required`}},
		{"unknown field", `{"image":"x","imagee":"y"}`, "", []string{`config field "imagee": unknown field; did you mean "image"?`}},
		{"wrong types", `{"image":1,"enabled":"yes","count":1.5,"gc":"soon","volumes":"a","labels":{"k":1}}`, "", []string{
			`field "image": want string, got 1`, `field "enabled": want bool`, `field "count": want int`,
			`field "gc": invalid duration "soon"`, `field "volumes": want list(string)`, `field "labels": want map(string)`}},
		{"null", `{"image":null}`, "", []string{`field "image": want string, got null`}},
		{"not an object", `[1]`, "", []string{`plugin "docker": config: must be an object`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := testSchema().Validate("docker", json.RawMessage(tc.raw))
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if string(got) != tc.want {
					t.Fatalf("Validate = %s, want %s", got, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = %s, want an error", got)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Plugin != "docker" {
				t.Fatalf("error %v is not a *ConfigError for docker", err)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestSchema_Check(t *testing.T) {
	cases := []struct {
		name    string
		fields  []*Field
		wantErr string
	}{
		{"valid", testSchema().Fields, ""},
		{"no name", []*Field{{Type: TypeString}}, "missing name"},
		{"duplicate", []*Field{{Name: "a", Type: TypeString}, {Name: "a", Type: TypeInt}}, `"a": declared twice`},
		{"unknown type", []*Field{{Name: "a", Type: "list(int)"}}, `unknown type "list(int)"`},
		{"bad default", []*Field{{Name: "a", Type: TypeInt, Default: json.RawMessage(`"x"`)}}, `"a": default: want int`},
		{"required with default", []*Field{{Name: "a", Type: TypeInt, Required: true, Default: json.RawMessage(`1`)}}, "take no default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Schema{Fields: tc.fields}).Check()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Check = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSchema_NilAcceptsObjects(t *testing.T) {
	var s *Schema
	got, err := s.Validate("p", json.RawMessage(`{"a":1}`))
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("Validate = %s, %v", got, err)
	}
}

func TestConfig_DecodePluginConfig(t *testing.T) {
	type conf struct {
		Image string `json:"image"`
	}
	var c conf
	if err := (&Config{PluginConfig: json.RawMessage(`{"image":"x"}`)}).DecodePluginConfig(&c); err != nil || c.Image != "x" {
		t.Fatalf("decode = %+v, %v", c, err)
	}
	if err := (&Config{PluginConfig: json.RawMessage(`{"imag":"x"}`)}).DecodePluginConfig(&c); err == nil {
		t.Fatal("unknown field accepted")
	}
	if err := (*Config)(nil).DecodePluginConfig(&c); err != nil {
		t.Fatal(err)
	}
}

func blockSchema() *Schema {
	return &Schema{Fields: []*Field{
		{Name: "tls", Type: TypeBlock, Block: &Schema{Fields: []*Field{
			{Name: "cert", Type: TypeString},
			{Name: "verify", Type: TypeBool, Default: json.RawMessage(`true`)},
		}}},
		{Name: "labels", Type: TypeBlock},
		{Name: "mount", Type: TypeBlockList, Block: &Schema{Fields: []*Field{
			{Name: "target", Type: TypeString, Required: true},
			{Name: "options", Type: TypeBlock, Block: &Schema{Fields: []*Field{{Name: "size", Type: TypeInt}}}},
		}}},
	}}
}

// TestSchema_Blocks: nested blocks are checked field by field, in both
// the object and the list-of-objects forms, with errors naming the path.
func TestSchema_Blocks(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"object form", `{"tls":{"cert":"a"},"labels":{"a":"b","n":1},"mount":[{"target":"/x","options":{"size":1}}]}`, nil},
		{"list form", `{"tls":[{"cert":"a"},{"verify":false}],"labels":[{"a":"b"}],"mount":{"target":"/x","options":[{"size":2}]}}`, nil},
		{"unknown nested", `{"tls":{"certt":"a"}}`, []string{`config field "tls.certt": unknown field; did you mean "cert"?`}},
		{"nested type", `{"mount":[{"target":"/x","options":{"size":"big"}}]}`, []string{`config field "mount[0].options.size": want int`}},
		{"nested required", `{"mount":[{"target":"/x"},{}]}`, []string{`config field "mount[1].target": required field is missing`}},
		{"not a block", `{"tls":"x","mount":[1]}`, []string{`"tls": want a block`, `"mount": want a block`}},
		{"free-form block values", `{"labels":{"a":["x"]}}`, []string{`"labels.a": want a string, number or bool`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := blockSchema().Check(); err != nil {
				t.Fatal(err)
			}
			_, err := blockSchema().Validate("docker", json.RawMessage(tc.raw))
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	bad := &Schema{Fields: []*Field{
		{Name: "a", Type: TypeString, Block: &Schema{}},
		{Name: "b", Type: TypeBlock, Block: &Schema{Fields: []*Field{{Name: "c", Type: "nope"}}}},
	}}
	err := bad.Check()
	for _, w := range []string{`"a": only block fields have nested fields`, `"b": schema field "c": unknown type`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Check = %v, want %q", err, w)
		}
	}
}
