package base

import (
	"encoding/json"
	"strings"
	"testing"
)

func taskSchema() *Schema {
	return &Schema{
		Fields: []*Field{
			{Name: "image", Type: TypeString, Required: true},
			{Name: "args", Type: TypeStringList},
			{Name: "shm_size", Type: TypeInt},
			{Name: "init", Type: TypeBool},
			{Name: "pull_timeout", Type: TypeDuration},
			{Name: "auth_soft_fail", Type: TypeBool},
			{Name: "mount", Type: TypeBlockList, Block: &Schema{Fields: []*Field{
				{Name: "target", Type: TypeString, Required: true},
				{Name: "readonly", Type: TypeBool},
			}}},
		},
		Hints: map[string]string{"port_map": "use the group's network block and ports"},
	}
}

// TestValidateSubmitted checks task config blocks as jobs hold them when
// submitted: unknown keys (with a guess at the intended one), Nomad keys
// with their hint, wrong types; references whose value the node resolves
// later pass whatever the field's type.
func TestValidateSubmitted(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		wantErr []string
	}{
		{"valid", `{"image":"redis","args":["a"],"shm_size":64,"init":true,"mount":[{"target":"/x"}]}`, nil},
		{"references", `{"image":"${NOMAD_META_image}","shm_size":"${NOMAD_META_shm}","init":"${meta.init}","pull_timeout":"${NOMAD_META_t}","mount":[{"target":"/x","readonly":"${meta.ro}"}]}`, nil},
		{"nulls are unset", `{"image":"redis","shm_size":null,"mount":[{"target":"/x","readonly":null}]}`, nil},
		{"typo", `{"image":"redis","auth_soft_fial":true}`, []string{`config field "auth_soft_fial": unknown field; did you mean "auth_soft_fail"?`}},
		{"typo nested", `{"image":"redis","mount":[{"target":"/x"},{"taget":"/y"}]}`, []string{
			`config field "mount[1].taget": unknown field; did you mean "target"?`,
			`config field "mount[1].target": required field is missing`}},
		{"nomad key", `{"image":"redis","port_map":[{"http":80}]}`, []string{`config field "port_map": a Nomad docker option drover does not support: use the group's network block and ports`}},
		{"unknown, nothing close", `{"image":"redis","zzz":1}`, []string{`config field "zzz": unknown field; known fields: args, auth_soft_fail, image, init, mount, pull_timeout, shm_size`}},
		{"wrong type", `{"image":"redis","shm_size":"big","init":"yes"}`, []string{`"init": want bool`, `"shm_size": want int`}},
		{"reference in a list is fine, a list is not a string", `{"image":"redis","args":"${x}"}`, []string{`"args": want list(string)`}},
		{"missing required", `{}`, []string{`config field "image": required field is missing`}},
		{"not an object", `[1]`, []string{"must be an object of fields"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := taskSchema().ValidateSubmitted("docker", json.RawMessage(tc.raw))
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("ValidateSubmitted: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("ValidateSubmitted accepted it")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if err := taskSchema().Check(); err != nil {
		t.Fatal(err)
	}
	clash := taskSchema()
	clash.Hints["image"] = "x"
	if err := clash.Check(); err == nil || !strings.Contains(err.Error(), `"image": also has a hint`) {
		t.Errorf("Check of a hint for a declared field = %v", err)
	}
	// Validate still checks what the node resolved.
	if _, err := taskSchema().Validate("docker", json.RawMessage(`{"image":"redis","shm_size":"${x}"}`)); err == nil {
		t.Error("Validate accepted a reference for an int")
	}
}

func TestClosest(t *testing.T) {
	names := []string{"args", "auth_soft_fail", "command", "image", "image_pull_timeout", "init"}
	cases := map[string]string{
		"comand":         "command",
		"commmand":       "command",
		"imgae":          "image",
		"auth_soft_fial": "auth_soft_fail",
		"arg":            "args",
		"xyz":            "",
		"entrypoint":     "",
		"in":             "",
	}
	for key, want := range cases {
		if got := closest(key, names); got != want {
			t.Errorf("closest(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestTaskConfigSchemas(t *testing.T) {
	s := TaskConfigSchemas{"docker": taskSchema()}
	if known, err := s.ValidateTaskConfig("docker", map[string]any{"image": "redis", "imgae": "x"}); !known || err == nil ||
		!strings.Contains(err.Error(), `"imgae": unknown field; did you mean "image"?`) {
		t.Errorf("docker: known %v, err %v", known, err)
	}
	if known, err := s.ValidateTaskConfig("docker", map[string]any{"image": "redis"}); !known || err != nil {
		t.Errorf("valid docker config: known %v, err %v", known, err)
	}
	if known, err := s.ValidateTaskConfig("docker", nil); !known || err == nil || !strings.Contains(err.Error(), `"image": required field is missing`) {
		t.Errorf("no config block: known %v, err %v", known, err)
	}
	if known, err := s.ValidateTaskConfig("my-plugin", map[string]any{"anything": 1}); known || err != nil {
		t.Errorf("a driver it does not know: known %v, err %v", known, err)
	}
}
