package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestNodePoolJSON: NodeIdentityTTL travels as Nomad's does, a duration
// string ("" when unset), and is read back from a string or a number of
// nanoseconds; a value of another type is refused.
func TestNodePoolJSON(t *testing.T) {
	b, err := json.Marshal(&NodePool{Name: "dev-1", NodeIdentityTTL: 720 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	if wire["NodeIdentityTTL"] != "720h0m0s" || wire["Name"] != "dev-1" {
		t.Errorf("wire %s, want NodeIdentityTTL \"720h0m0s\" and the name", b)
	}
	if b, _ := json.Marshal(NodePool{Name: "x"}); !strings.Contains(string(b), `"NodeIdentityTTL":""`) {
		t.Errorf("unset TTL wire %s, want \"\"", b)
	}
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{`{"Name":"a","NodeIdentityTTL":"720h0m0s"}`, 720 * time.Hour, false},
		{`{"Name":"a","NodeIdentityTTL":3600000000000}`, time.Hour, false},
		{`{"Name":"a","NodeIdentityTTL":""}`, 0, false},
		{`{"Name":"a"}`, 0, false},
		{`{"Name":"a","NodeIdentityTTL":"soon"}`, 0, true},
		{`{"Name":"a","NodeIdentityTTL":true}`, 0, true},
	}
	for _, tc := range cases {
		var p NodePool
		err := json.Unmarshal([]byte(tc.in), &p)
		if (err != nil) != tc.err || (err == nil && (p.NodeIdentityTTL != tc.want || p.Name != "a")) {
			t.Errorf("%s: %+v, %v; want TTL %s (error %v)", tc.in, p, err, tc.want, tc.err)
		}
	}
}
