package grpcbase

import (
	"encoding/json"
	"reflect"
	"testing"

	gproto "google.golang.org/protobuf/proto"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/base/proto"
)

// wire sends m through protobuf's binary encoding.
func wire[M gproto.Message](t *testing.T, m M, out M) M {
	t.Helper()
	b, err := gproto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := gproto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConvert_ConfigRoundTrip(t *testing.T) {
	zero, port := 0, 20000
	cases := []struct {
		name string
		cfg  *base.Config
	}{
		{"empty", &base.Config{}},
		{"plugin config only", &base.Config{PluginConfig: json.RawMessage(`{"x":1}`)}},
		{"zero port is not unset", &base.Config{AgentConfig: &base.AgentConfig{NodeID: "n", ClientMinPort: &zero, ClientMaxPort: &port}}},
		{"unset ports", &base.Config{AgentConfig: &base.AgentConfig{DataDir: "/d"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ConfigFromProto(wire(t, ConfigToProto(tc.cfg), &proto.SetConfigRequest{}))
			if !reflect.DeepEqual(got, tc.cfg) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", got, tc.cfg)
			}
		})
	}
}

func TestConvert_SchemaRoundTrip(t *testing.T) {
	s := &base.Schema{Fields: []*base.Field{
		{Name: "a", Type: base.TypeBool, Default: json.RawMessage(`false`), Description: "d"},
		{Name: "b", Type: base.TypeString, Required: true},
	}}
	got := SchemaFromProto(wire(t, SchemaToProto(s), &proto.ConfigSchemaResponse{}))
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, s)
	}
}
