package scheduler

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

// volumeNode is a ready node offering the named host volumes; a name
// ending in ":ro" is offered read-only.
func volumeNode(id string, volumes ...string) *structs.Node {
	n := newNode(id)
	n.HostVolumes = map[string]*structs.ClientHostVolumeConfig{}
	for _, v := range volumes {
		ro := len(v) > 3 && v[len(v)-3:] == ":ro"
		if ro {
			v = v[:len(v)-3]
		}
		n.HostVolumes[v] = &structs.ClientHostVolumeConfig{Name: v, Path: "/srv/" + v, ReadOnly: ro}
	}
	return n
}

// volumeJob is newJob's job whose group asks for host volume source
// (read-only when ro) and whose task mounts it.
func volumeJob(typ, source string, ro bool) *structs.Job {
	j := newJob("web", typ, 1, 100, 100)
	tg := j.TaskGroups[0]
	tg.Volumes = map[string]*structs.VolumeRequest{"v": {Name: "v", Type: structs.VolumeTypeHost, Source: source, ReadOnly: ro}}
	tg.Tasks[0].VolumeMounts = []*structs.VolumeMount{{Volume: "v", Destination: "/data"}}
	return j
}

func TestVolumesBlock(t *testing.T) {
	cases := []struct {
		name string
		node *structs.Node
		tg   func(tg *structs.TaskGroup)
		want string
	}{
		{"offered", volumeNode("a", "data"), nil, ""},
		{"missing", volumeNode("a", "other"), nil, `missing compatible host volumes: data`},
		{"node without host volumes", newNode("a"), nil, `missing compatible host volumes: data`},
		{"read-only on the node, writable asked", volumeNode("a", "data:ro"), nil,
			`missing compatible host volumes: data is read-only and the group's volume is not`},
		{"read-only on the node, read-only asked", volumeNode("a", "data:ro"),
			func(tg *structs.TaskGroup) { tg.Volumes["v"].ReadOnly = true }, ""},
		{"the first failing volume by name is named", volumeNode("a"), func(tg *structs.TaskGroup) {
			tg.Volumes["a"] = &structs.VolumeRequest{Type: structs.VolumeTypeHost, Source: "first"}
			tg.Volumes["z"] = &structs.VolumeRequest{Type: structs.VolumeTypeHost, Source: "last"}
		}, `missing compatible host volumes: first`},
		{"driver that cannot mount", func() *structs.Node {
			n := volumeNode("a", "data")
			n.Drivers["mock"].MountsUnsupported = true
			return n
		}(), nil, "driver mock cannot mount volumes"},
		{"driver that cannot mount, task without mounts", func() *structs.Node {
			n := volumeNode("a", "data")
			n.Drivers["mock"].MountsUnsupported = true
			return n
		}(), func(tg *structs.TaskGroup) { tg.Tasks[0].VolumeMounts = nil }, ""},
		{"no volumes", newNode("a"), func(tg *structs.TaskGroup) {
			tg.Volumes = nil
			tg.Tasks[0].VolumeMounts = nil
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := volumeJob("service", "data", false).TaskGroups[0]
			if tc.tg != nil {
				tc.tg(tg)
			}
			if got := volumesBlock(tc.node, tg); got != tc.want {
				t.Errorf("volumesBlock = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostVolumePlacement(t *testing.T) {
	cases := []struct {
		name       string
		typ        string
		ro         bool
		nodes      []*structs.Node
		placedOn   []string
		filteredBy string // a ConstraintFiltered key of the failed placement
	}{
		{"only on the node with the volume", "service", false,
			[]*structs.Node{volumeNode("a"), volumeNode("b", "data"), volumeNode("c", "other")}, []string{"b"}, ""},
		{"no node has it: the failure names it", "service", false,
			[]*structs.Node{volumeNode("a"), volumeNode("b", "other")}, nil, `missing compatible host volumes: data`},
		{"read-only volume needs a read-only request", "service", false,
			[]*structs.Node{volumeNode("a", "data:ro")}, nil, `missing compatible host volumes: data is read-only and the group's volume is not`},
		{"read-only request takes a read-only volume", "service", true,
			[]*structs.Node{volumeNode("a", "data:ro")}, []string{"a"}, ""},
		{"system job: only nodes with the volume", "system", false,
			[]*structs.Node{volumeNode("a", "data"), volumeNode("b"), volumeNode("c", "data")}, []string{"a", "c"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newFakeState()
			st.nodes = tc.nodes
			job := volumeJob(tc.typ, "data", tc.ro)
			st.jobs[job.NamespacedID()] = job
			plan, err := testOptions().Process(st, evalFor(job))
			if err != nil {
				t.Fatal(err)
			}
			placed := plan.Placements()
			if len(placed) != len(tc.placedOn) {
				t.Fatalf("placed %d, want %d\n%s", len(placed), len(tc.placedOn), renderPlan(plan))
			}
			for i, n := range tc.placedOn {
				if placed[i].NodeID != n {
					t.Errorf("placement %d on %s, want %s", i, placed[i].NodeID, n)
				}
			}
			if tc.filteredBy != "" {
				m := plan.FailedTGAllocs["web"]
				if m == nil || m.ConstraintFiltered[tc.filteredBy] == 0 {
					t.Errorf("want the failure filtered by %q, got %+v", tc.filteredBy, m)
				}
			}
		})
	}
}

func TestVolumeChangesAreDestructive(t *testing.T) {
	base := volumeJob("service", "data", false).TaskGroups[0]
	cases := []struct {
		name   string
		mutate func(tg *structs.TaskGroup)
	}{
		{"volume source", func(tg *structs.TaskGroup) { tg.Volumes["v"].Source = "other" }},
		{"volume read_only", func(tg *structs.TaskGroup) { tg.Volumes["v"].ReadOnly = true }},
		{"mount destination", func(tg *structs.TaskGroup) { tg.Tasks[0].VolumeMounts[0].Destination = "/other" }},
		{"mount read_only", func(tg *structs.TaskGroup) { tg.Tasks[0].VolumeMounts[0].ReadOnly = true }},
		{"mount removed", func(tg *structs.TaskGroup) { tg.Tasks[0].VolumeMounts = nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := base.Copy()
			tc.mutate(next)
			if !tasksUpdated(base, next) {
				t.Error("tasksUpdated = false, want a destructive update")
			}
		})
	}
	if tasksUpdated(base, base.Copy()) {
		t.Error("an unchanged group with volumes is a destructive update")
	}
}
