package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertDevices(t *testing.T) {
	tests := []struct {
		name    string
		devices string // the JSON of Resources.Devices, as jobspec emits it
		want    []*structs.RequestedDevice
		wantErr string
	}{
		{
			name:    "count defaults to one",
			devices: `[{"Name":"nvidia/gpu"}]`,
			want:    []*structs.RequestedDevice{{Name: "nvidia/gpu", Count: 1}},
		},
		{
			name: "constraints and affinities",
			devices: `[{"Name":"drover/gpu/fake","Count":2,
				"Constraints":[{"LTarget":"${device.attr.memory}","RTarget":"8 GiB","Operand":">="}],
				"Affinities":[{"LTarget":"${device.model}","RTarget":"fake","Operand":"=","Weight":50}]}]`,
			want: []*structs.RequestedDevice{{Name: "drover/gpu/fake", Count: 2,
				Constraints: []*structs.Constraint{{LTarget: "${device.attr.memory}", RTarget: "8 GiB", Operand: ">="}},
				Affinities:  []*structs.Affinity{{LTarget: "${device.model}", RTarget: "fake", Operand: "=", Weight: 50}}}},
		},
		{name: "zero count", devices: `[{"Name":"gpu","Count":0}]`, wantErr: "count must be at least 1"},
		{name: "no name", devices: `[{"Count":1}]`, wantErr: "needs a name"},
		{name: "bad weight", devices: `[{"Name":"gpu","Affinities":[{"LTarget":"a","RTarget":"b","Weight":0}]}]`, wantErr: "affinity weight 0"},
		{name: "not a list", devices: `{"Name":"gpu"}`, wantErr: "device blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Tasks[0].Resources = &api.Resources{Devices: json.RawMessage(tt.devices)}
			})
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
			got := out.TaskGroups[0].Tasks[0].Resources.Devices
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("devices = %s", mustJSON(got))
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
