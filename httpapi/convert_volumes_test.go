package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertVolumes(t *testing.T) {
	withVolume := func(v *api.VolumeRequest, mounts ...*api.VolumeMount) *api.Job {
		return minimalJob(func(j *api.Job) {
			j.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"data": v}
			j.TaskGroups[0].Tasks[0].VolumeMounts = mounts
		})
	}
	tests := []struct {
		name    string
		in      *api.Job
		want    *structs.TaskGroup // Volumes and the task's VolumeMounts
		warn    []string
		wantErr []string
	}{
		{
			name: "host volume with defaults",
			in: withVolume(&api.VolumeRequest{Type: "host", Source: "shared"},
				&api.VolumeMount{Volume: api.String("data"), Destination: api.String("/data")}),
			want: &structs.TaskGroup{
				Volumes: map[string]*structs.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
				Tasks: []*structs.Task{{VolumeMounts: []*structs.VolumeMount{
					{Volume: "data", Destination: "/data", PropagationMode: structs.VolumeMountPropagationPrivate}}}},
			},
		},
		{
			name: "read-only volume mounted with an explicit read_only = false warns",
			in: withVolume(&api.VolumeRequest{Name: "data", Type: "host", Source: "shared", ReadOnly: true},
				&api.VolumeMount{Volume: api.String("data"), Destination: api.String("/data"), ReadOnly: api.Bool(false)}),
			want: &structs.TaskGroup{
				Volumes: map[string]*structs.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared", ReadOnly: true}},
				Tasks: []*structs.Task{{VolumeMounts: []*structs.VolumeMount{
					{Volume: "data", Destination: "/data", PropagationMode: structs.VolumeMountPropagationPrivate}}}},
			},
			warn: []string{`group "g", task "t", volume_mount 1: volume "data" is read_only in its volume block, so this mount is read-only`},
		},
		{
			name: "CSI-only fields are refused, each named",
			in: withVolume(&api.VolumeRequest{Type: "host", Source: "shared", AccessMode: "single-node-writer",
				AttachmentMode: "file-system", PerAlloc: true, Sticky: true, MountOptions: json.RawMessage(`{"FSType": "ext4"}`)}),
			wantErr: []string{"access_mode (AccessMode)", "attachment_mode (AttachmentMode)", "per_alloc (PerAlloc)",
				"sticky (Sticky)", "mount_options (MountOptions)", `group "g", volume "data"`},
		},
		{
			name:    "null volume and mount",
			in:      withVolume(nil, nil),
			wantErr: []string{`group "g", volume "data" is null`, `group "g", task "t", volume_mount 1 is null`},
		},
		{
			name: "selinux_label is refused",
			in: withVolume(&api.VolumeRequest{Type: "host", Source: "shared"},
				&api.VolumeMount{Volume: api.String("data"), Destination: api.String("/data"), SELinuxLabel: api.String("z")}),
			wantErr: []string{"selinux_label (SELinuxLabel) is not supported by drover yet"},
		},
		{
			name: "unset CSI fields as Nomad's clients send them are accepted",
			in: withVolume(&api.VolumeRequest{Type: "host", Source: "shared", MountOptions: json.RawMessage("null")},
				&api.VolumeMount{Volume: api.String("data"), Destination: api.String("/data"), SELinuxLabel: api.String("")}),
			want: &structs.TaskGroup{
				Volumes: map[string]*structs.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
				Tasks: []*structs.Task{{VolumeMounts: []*structs.VolumeMount{
					{Volume: "data", Destination: "/data", PropagationMode: structs.VolumeMountPropagationPrivate}}}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := ConvertJob(tc.in)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ConvertJob succeeded, want an error containing %q", tc.wantErr)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ConvertJob: %v", err)
			}
			if len(warnings) != len(tc.warn) {
				t.Fatalf("warnings = %q, want %q", warnings, tc.warn)
			}
			for i, w := range tc.warn {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q does not contain %q", warnings[i], w)
				}
			}
			tg := got.TaskGroups[0]
			if !reflect.DeepEqual(tg.Volumes, tc.want.Volumes) {
				t.Errorf("volumes = %s, want %s", jsonOf(tg.Volumes), jsonOf(tc.want.Volumes))
			}
			if !reflect.DeepEqual(tg.Tasks[0].VolumeMounts, tc.want.Tasks[0].VolumeMounts) {
				t.Errorf("volume mounts = %s, want %s", jsonOf(tg.Tasks[0].VolumeMounts), jsonOf(tc.want.Tasks[0].VolumeMounts))
			}
		})
	}
}

// TestConvertVolumesFromNomadJSON checks a job with a host volume, as
// Nomad's API clients send it (every field present, CSI ones unset),
// through decoding, the conversion and validation.
func TestConvertVolumesFromNomadJSON(t *testing.T) {
	src := `{"ID": "db", "TaskGroups": [{"Name": "g",
	  "Volumes": {"data": {"Name": "data", "Type": "host", "Source": "mysql", "ReadOnly": true,
	    "Sticky": false, "AccessMode": "", "AttachmentMode": "", "MountOptions": null, "PerAlloc": false}},
	  "Tasks": [{"Name": "t", "Driver": "exec", "Config": {"command": "/bin/true"},
	    "VolumeMounts": [{"Volume": "data", "Destination": "/var/lib/mysql", "ReadOnly": null,
	      "PropagationMode": "private", "SELinuxLabel": ""}]}]}]}`
	var aj api.Job
	dec := json.NewDecoder(strings.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&aj); err != nil {
		t.Fatal(err)
	}
	j, warnings, err := ConvertJob(&aj)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("ConvertJob: %v (warnings %q)", err, warnings)
	}
	j.Canonicalize()
	if err := j.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	tg := j.TaskGroups[0]
	if v := tg.Volumes["data"]; v == nil || *v != (structs.VolumeRequest{Name: "data", Type: "host", Source: "mysql", ReadOnly: true}) {
		t.Errorf("volume = %s", jsonOf(v))
	}
	if ms := tg.Tasks[0].VolumeMounts; len(ms) != 1 || *ms[0] != (structs.VolumeMount{Volume: "data", Destination: "/var/lib/mysql", PropagationMode: "private"}) {
		t.Errorf("mounts = %s", jsonOf(ms))
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
