package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertNetworks(t *testing.T) {
	tests := []struct {
		name     string
		networks string // the JSON of TaskGroup.Networks, as jobspec emits it
		want     []*structs.NetworkResource
		wantErr  string
		wantWarn string
	}{
		{name: "no network block", networks: `null`},
		{name: "unset mode stays unset", networks: `[{}]`, want: []*structs.NetworkResource{{}}},
		{name: "host", networks: `[{"Mode":"host"}]`, want: []*structs.NetworkResource{{Mode: "host"}}},
		{name: "none", networks: `[{"Mode":"none"}]`, want: []*structs.NetworkResource{{Mode: "none"}}},
		{name: "bridge is refused", networks: `[{"Mode":"bridge"}]`, wantErr: "network mode bridge is not supported by drover yet"},
		{name: "cni is refused", networks: `[{"Mode":"cni/mynet"}]`, wantErr: "network mode cni/mynet is not supported by drover yet"},
		{name: "unknown mode", networks: `[{"Mode":"overlay"}]`, wantErr: `unknown network mode "overlay"`},
		{name: "two blocks", networks: `[{"Mode":"host"},{"Mode":"none"}]`, wantErr: "only one network block"},
		{
			name:     "ports are warned about",
			networks: `[{"Mode":"host","ReservedPorts":[{"Label":"admin","Value":9000}],"DynamicPorts":[{"Label":"http","To":8080}]}]`,
			want:     []*structs.NetworkResource{{Mode: "host"}},
			wantWarn: "network ports (admin, http) are not yet allocated",
		},
		{
			name:     "dns is warned about",
			networks: `[{"Mode":"none","DNS":{"Servers":["1.1.1.1"]}}]`,
			want:     []*structs.NetworkResource{{Mode: "none"}},
			wantWarn: "network dns is not supported by drover yet",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var networks []*api.NetworkResource
			if err := json.Unmarshal([]byte(tt.networks), &networks); err != nil {
				t.Fatal(err)
			}
			job := minimalJob(func(j *api.Job) { j.TaskGroups[0].Networks = networks })
			out, warnings, err := ConvertJob(job)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if structs.KindOf(err) != structs.KindInvalid {
					t.Fatalf("kind = %v, want invalid (HTTP 400)", structs.KindOf(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.TaskGroups[0].Networks; !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("networks = %s, want %s", mustJSON(got), mustJSON(tt.want))
			}
			joined := strings.Join(warnings, "\n")
			if tt.wantWarn != "" && !strings.Contains(joined, tt.wantWarn) {
				t.Fatalf("warnings = %q, want one with %q", warnings, tt.wantWarn)
			}
			if tt.wantWarn == "" && strings.Contains(joined, "network") {
				t.Fatalf("unexpected network warning: %q", warnings)
			}
		})
	}
}
