package structs

import (
	"strings"
	"testing"
)

// volumeJob is a valid job whose group has a host volume "data" mounted
// by its task at /data.
func volumeJob() *Job {
	j := validJob()
	tg := j.TaskGroups[0]
	tg.Volumes = map[string]*VolumeRequest{"data": {Name: "data", Type: VolumeTypeHost, Source: "shared"}}
	tg.Tasks[0].VolumeMounts = []*VolumeMount{{Volume: "data", Destination: "/data"}}
	return j
}

func TestVolumeValidation(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(tg *TaskGroup)
		want   []string // substrings of the error; none means valid
	}{
		{"valid", func(tg *TaskGroup) {}, nil},
		{"valid read-only private mount below /local", func(tg *TaskGroup) {
			tg.Volumes["data"].ReadOnly = true
			tg.Tasks[0].VolumeMounts[0].Destination = "/local/data/"
			tg.Tasks[0].VolumeMounts[0].PropagationMode = VolumeMountPropagationPrivate
		}, nil},
		{"a volume declared but not mounted", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts = nil }, nil},
		{"mount of an undefined volume", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Volume = "dta" },
			[]string{`group "g", task "t", volume_mount 1: volume "dta" is not defined`, `"data"`}},
		{"mount of a volume in a group without any", func(tg *TaskGroup) { tg.Volumes = nil },
			[]string{`volume "data" is not defined`, "it has none"}},
		{"mount without a volume", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Volume = "" },
			[]string{"volume_mount 1: volume is missing"}},
		{"relative destination", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Destination = "data" },
			[]string{`destination: "data" must be an absolute path inside the task, such as "/data"`}},
		{"missing destination", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Destination = "" },
			[]string{"destination: it is missing"}},
		{"destination on the root", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Destination = "/a/.." },
			[]string{"would hide the task's whole filesystem"}},
		{"destination on /local", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Destination = "/local/" },
			[]string{`"/local/" is where the task's own local directory is mounted`}},
		{"duplicate destination", func(tg *TaskGroup) {
			tg.Tasks[0].VolumeMounts = append(tg.Tasks[0].VolumeMounts, &VolumeMount{Volume: "data", Destination: "/data/."})
		}, []string{`volume_mount 2: destination "/data/." is also the destination of volume_mount 1`}},
		{"destination too long", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Destination = "/" + strings.Repeat("d", 5000) },
			[]string{"5001 bytes long: at most 4096"}},
		{"control character in destination", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].Destination = "/da\nta" },
			[]string{"control character"}},
		{"unsupported propagation", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].PropagationMode = VolumeMountPropagationBidirectional },
			[]string{`propagation_mode "bidirectional" is not supported by drover yet`}},
		{"invalid propagation", func(tg *TaskGroup) { tg.Tasks[0].VolumeMounts[0].PropagationMode = "shared" },
			[]string{`propagation_mode "shared" is invalid`}},
		{"csi volume", func(tg *TaskGroup) { tg.Volumes["data"].Type = VolumeTypeCSI },
			[]string{`group "g", volume "data": type "csi": CSI volumes are not supported`}},
		{"missing type", func(tg *TaskGroup) { tg.Volumes["data"].Type = "" },
			[]string{`volume "data": type is missing`}},
		{"unknown type", func(tg *TaskGroup) { tg.Volumes["data"].Type = "nfs" },
			[]string{`type "nfs" is invalid`}},
		{"missing source", func(tg *TaskGroup) { tg.Volumes["data"].Source = "" },
			[]string{`volume "data": source is missing`}},
		{"source with a slash", func(tg *TaskGroup) { tg.Volumes["data"].Source = "a/b" },
			[]string{`source "a/b" contains "/"`}},
		{"volume name with a slash", func(tg *TaskGroup) {
			tg.Volumes = map[string]*VolumeRequest{"a/b": {Type: VolumeTypeHost, Source: "s"}}
			tg.Tasks[0].VolumeMounts[0].Volume = "a/b"
		}, []string{`volume name "a/b" contains "/"`}},
		{"name differs from key", func(tg *TaskGroup) { tg.Volumes["data"].Name = "other" },
			[]string{`its Name "other" differs from its key`}},
		{"null volume and mount", func(tg *TaskGroup) {
			tg.Volumes["x"] = nil
			tg.Tasks[0].VolumeMounts = append(tg.Tasks[0].VolumeMounts, nil)
		}, []string{`volume "x": the block is empty`, "volume_mount 2: the block is empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := volumeJob()
			tc.mutate(j.TaskGroups[0])
			err := j.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted the job; want an error with %q", tc.want)
			}
			if KindOf(err) != KindInvalid {
				t.Errorf("error kind of %v is not invalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestVolumeCopiesAreDeep(t *testing.T) {
	j := volumeJob()
	c := j.Copy()
	c.TaskGroups[0].Volumes["data"].ReadOnly = true
	c.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination = "/other"
	if j.TaskGroups[0].Volumes["data"].ReadOnly || j.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination != "/data" {
		t.Fatal("Job.Copy shares volume blocks with the original")
	}
	n := &Node{HostVolumes: map[string]*ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv"}}}
	nc := n.Copy()
	nc.HostVolumes["shared"].ReadOnly = true
	if n.HostVolumes["shared"].ReadOnly {
		t.Fatal("Node.Copy shares host volumes with the original")
	}
}

func TestMountReadOnly(t *testing.T) {
	rw := &ClientHostVolumeConfig{}
	ro := &ClientHostVolumeConfig{ReadOnly: true}
	cases := []struct {
		hv   *ClientHostVolumeConfig
		req  *VolumeRequest
		m    *VolumeMount
		want bool
	}{
		{rw, &VolumeRequest{}, &VolumeMount{}, false},
		{ro, &VolumeRequest{}, &VolumeMount{}, true},
		{rw, &VolumeRequest{ReadOnly: true}, &VolumeMount{}, true},
		{rw, &VolumeRequest{}, &VolumeMount{ReadOnly: true}, true},
		{nil, nil, nil, false},
	}
	for i, tc := range cases {
		if got := MountReadOnly(tc.hv, tc.req, tc.m); got != tc.want {
			t.Errorf("case %d: MountReadOnly = %v, want %v", i, got, tc.want)
		}
	}
}

func TestVolumeDiffs(t *testing.T) {
	old := volumeJob()
	new := old.Copy()
	tg := new.TaskGroups[0]
	tg.Volumes["data"].ReadOnly = true
	tg.Volumes["logs"] = &VolumeRequest{Name: "logs", Type: VolumeTypeHost, Source: "logs"}
	tg.Tasks[0].VolumeMounts[0].Destination = "/srv"
	d := DiffJobs(old, new)
	g := d.TaskGroups[0]
	if g.Type != DiffTypeEdited || len(g.Objects) != 2 {
		t.Fatalf("group diff %+v", g)
	}
	if o := g.Objects[0]; o.Name != "Volume" || o.Type != DiffTypeEdited || len(o.Fields) != 1 || o.Fields[0].Name != "ReadOnly" || o.Fields[0].New != "true" {
		t.Errorf("data volume diff %+v", o)
	}
	if o := g.Objects[1]; o.Name != "Volume" || o.Type != DiffTypeAdded {
		t.Errorf("logs volume diff %+v", o)
	}
	task := g.Tasks[0]
	if task.Type != DiffTypeEdited || len(task.Objects) != 2 || task.Annotations[0] != AnnotationForcesDestructiveUpdate {
		t.Fatalf("task diff %+v", task)
	}
	if del, add := task.Objects[0], task.Objects[1]; del.Name != "VolumeMount" || del.Type != DiffTypeDeleted || add.Type != DiffTypeAdded {
		t.Errorf("mount diffs %+v %+v", del, add)
	}
	if d := DiffJobs(old, old.Copy()); d.TaskGroups[0].Type != DiffTypeNone {
		t.Errorf("an unchanged job with volumes diffs: %+v", d.TaskGroups[0])
	}
}
