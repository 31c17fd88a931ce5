package rawexec

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/drover-io/drover/plugins/base"
)

func TestPluginConfig(t *testing.T) {
	d := New(nil)
	ctx := context.Background()
	schema, err := d.ConfigSchema(ctx)
	if err != nil || schema.Check() != nil {
		t.Fatalf("schema = %+v, %v", schema, err)
	}
	tests := []struct {
		name    string
		raw     string
		wantErr string
	}{
		{"empty", ``, ""},
		{"enabled", `{"enabled":true}`, ""},
		{"wrong type", `{"enabled":"yes"}`, `plugin "raw_exec": config field "enabled": want bool`},
		{"unknown field", `{"no_cgroups":true}`, `plugin "raw_exec": config field "no_cgroups": unknown field`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := schema.Validate(Name, json.RawMessage(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("Validate = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := d.SetConfig(ctx, &base.Config{PluginConfig: v}); err != nil {
				t.Fatalf("SetConfig(%s): %v", v, err)
			}
		})
	}
	info, err := d.PluginInfo(ctx)
	if err != nil || info.Name != Name || info.Type != base.PluginTypeDriver {
		t.Fatalf("PluginInfo = %+v, %v", info, err)
	}
}
