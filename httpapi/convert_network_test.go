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
		{name: "bridge", networks: `[{"Mode":"bridge"}]`, want: []*structs.NetworkResource{{Mode: "bridge"}}},
		{name: "cni", networks: `[{"Mode":"cni/mynet"}]`, want: []*structs.NetworkResource{{Mode: "cni/mynet"}}},
		{name: "unknown mode", networks: `[{"Mode":"overlay"}]`, wantErr: `unknown network mode "overlay"`},
		{name: "two blocks", networks: `[{"Mode":"host"},{"Mode":"none"}]`, wantErr: "only one network block"},
		{
			name:     "ports are converted",
			networks: `[{"Mode":"host","ReservedPorts":[{"Label":"admin","Value":9000,"HostNetwork":"private","IgnoreCollision":true}],"DynamicPorts":[{"Label":"http","To":8080}]}]`,
			want: []*structs.NetworkResource{{Mode: "host",
				ReservedPorts: []structs.Port{{Label: "admin", Value: 9000, HostNetwork: "private", IgnoreCollision: true}},
				DynamicPorts:  []structs.Port{{Label: "http", To: 8080}}}},
		},
		{
			name:     "dns is warned about",
			networks: `[{"Mode":"none","DNS":{"Servers":["1.1.1.1"]}}]`,
			want:     []*structs.NetworkResource{{Mode: "none"}},
			wantWarn: "network dns is not supported by drover in host mode and was ignored",
		},
		{
			name:     "bridge keeps dns, hostname and cni args",
			networks: `[{"Mode":"bridge","Hostname":"web-1","DNS":{"Servers":["10.0.0.53"],"Searches":["svc"],"Options":["ndots:2"]},"CNI":{"Args":{"IgnoreUnknown":"1"}}}]`,
			want: []*structs.NetworkResource{{Mode: "bridge", Hostname: "web-1",
				DNS: &structs.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"svc"}, Options: []string{"ndots:2"}},
				CNI: &structs.CNIConfig{Args: map[string]string{"IgnoreUnknown": "1"}}}},
		},
		{
			name:     "bridge-only fields are warned about together",
			networks: `[{"Hostname":"h","MBits":10}]`,
			want:     []*structs.NetworkResource{{}},
			wantWarn: "network hostname, mbits are not supported by drover in host mode and were ignored",
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

func TestConvertTaskNetworks(t *testing.T) {
	tests := []struct {
		name     string
		networks string // the JSON of Task.Resources.Networks
		want     []*structs.NetworkResource
		wantErr  string
	}{
		{name: "none", networks: `null`},
		{name: "ports", networks: `[{"ReservedPorts":[{"Label":"admin","Value":9000}],"DynamicPorts":[{"Label":"http"}]}]`,
			want: []*structs.NetworkResource{{ReservedPorts: []structs.Port{{Label: "admin", Value: 9000}}, DynamicPorts: []structs.Port{{Label: "http"}}}}},
		{name: "mode is a group setting", networks: `[{"Mode":"none"}]`, wantErr: `mode "none" is a group setting`},
		{name: "two blocks", networks: `[{},{}]`, wantErr: "only one network block is allowed per task, found 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var networks []*api.NetworkResource
			if err := json.Unmarshal([]byte(tt.networks), &networks); err != nil {
				t.Fatal(err)
			}
			job := minimalJob(func(j *api.Job) { j.TaskGroups[0].Tasks[0].Resources = &api.Resources{Networks: networks} })
			out, _, err := ConvertJob(job)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.TaskGroups[0].Tasks[0].Resources.Networks; !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("networks = %s, want %s", mustJSON(got), mustJSON(tt.want))
			}
		})
	}
}

func TestPortReferenceWarnings(t *testing.T) {
	job := minimalJob(func(j *api.Job) {
		g := j.TaskGroups[0]
		g.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}, {Label: "http-alt"}}}}
		g.Tasks[0].Env = map[string]string{"A": "${NOMAD_PORT_http}", "B": "${NOMAD_HOST_ADDR_http_alt}", "C": "${NOMAD_ADDR_db}"}
		g.Tasks[0].Config = map[string]any{"args": []any{"--port", "${NOMAD_ALLOC_PORT_grpc}", "${NOMAD_PORT_side_rpc}"}}
		g.Tasks = append(g.Tasks, &api.Task{Name: "side", Driver: "mock_driver", Resources: &api.Resources{
			Networks: []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "rpc"}}}}}})
	})
	_, warnings, err := ConvertJob(job)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{`${NOMAD_PORT_db}`, `${NOMAD_PORT_grpc}`} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q do not name %s", warnings, want)
		}
	}
	for _, declared := range []string{"NOMAD_PORT_http}", "NOMAD_PORT_http_alt", "NOMAD_PORT_side_rpc", "NOMAD_PORT_rpc"} {
		if strings.Contains(joined, declared) {
			t.Errorf("warnings %q name a declared port (%s)", warnings, declared)
		}
	}
}
