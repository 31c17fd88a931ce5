package structs

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidateNodeMetaKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{"rack", true},
		{"connect.sidecar_image", true},
		{"a.b-c.d_e9", true},
		{"_x", true},
		{"zone-1", true},
		{"région", true},
		{"", false},
		{"9lives", false},
		{"-x", false},
		{"a..b", false},
		{".a", false},
		{"a.", false},
		{"has space", false},
		{"a$b", false},
		{"a{b}", false},
		{"a/b", false},
	}
	for _, tc := range tests {
		err := ValidateNodeMetaKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateNodeMetaKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
		if err != nil && KindOf(err) != KindInvalid {
			t.Errorf("ValidateNodeMetaKey(%q): kind %v, want invalid", tc.key, KindOf(err))
		}
	}
}

func TestValidateNodeMetaChanges(t *testing.T) {
	v := "x"
	if err := ValidateNodeMetaChanges(nil); err == nil || !strings.Contains(err.Error(), "Meta") {
		t.Errorf("no changes: %v", err)
	}
	if err := ValidateNodeMetaChanges(map[string]*string{"ok": &v, "bad key": nil}); err == nil || !strings.Contains(err.Error(), `"bad key"`) {
		t.Errorf("bad key: %v", err)
	}
	if err := ValidateNodeMetaChanges(map[string]*string{"ok": &v, "gone": nil}); err != nil {
		t.Errorf("valid changes: %v", err)
	}
}

func TestMergeNodeMeta(t *testing.T) {
	v, w := "dyn", "new"
	static := map[string]string{"a": "1", "b": "2"}
	got := MergeNodeMeta(static, map[string]*string{"a": &v, "b": nil, "c": &w, "d": nil})
	if want := map[string]string{"a": "dyn", "c": "new"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("merged = %v, want %v", got, want)
	}
	if static["a"] != "1" || static["b"] != "2" {
		t.Fatalf("static changed: %v", static)
	}
	if got := MergeNodeMeta(nil, nil); got == nil {
		t.Fatal("merge of nothing is nil, want an empty map")
	}
}

func TestCopyNodeMeta(t *testing.T) {
	if CopyNodeMeta(nil) != nil {
		t.Fatal("nil copied to non-nil")
	}
	v := "1"
	m := map[string]*string{"a": &v, "gone": nil}
	c := CopyNodeMeta(m)
	v = "2"
	if got := c["a"]; got == nil || *got != "1" {
		t.Errorf("copy shares its values with the original: a = %v", got)
	}
	if got, ok := c["gone"]; !ok || got != nil {
		t.Errorf("an unset key is not kept unset: %v, %v", got, ok)
	}
}
