package structs

import (
	"maps"
	"slices"
)

// volumesDiff compares a group's volume blocks: one "Volume" object for
// each volume added, removed or changed, by name.
func volumesDiff(old, new map[string]*VolumeRequest) []*ObjectDiff {
	names := slices.Sorted(maps.Keys(old))
	for n := range new {
		if _, ok := old[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []*ObjectDiff
	for _, n := range names {
		if d := objectDiff("Volume", flatStruct(old[n]), flatStruct(new[n])); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// volumeMountsDiff lists a task's added and removed volume_mount blocks
// as "VolumeMount" objects (a changed block is one removed and one
// added).
func volumeMountsDiff(old, new []*VolumeMount) []*ObjectDiff {
	in := func(ms []*VolumeMount, m *VolumeMount) bool {
		return slices.ContainsFunc(ms, func(x *VolumeMount) bool { return x != nil && m != nil && *x == *m })
	}
	var out []*ObjectDiff
	for _, m := range old {
		if m != nil && !in(new, m) {
			out = append(out, &ObjectDiff{Type: DiffTypeDeleted, Name: "VolumeMount", Fields: fieldDiffs(flatStruct(m), nil)})
		}
	}
	for _, m := range new {
		if m != nil && !in(old, m) {
			out = append(out, &ObjectDiff{Type: DiffTypeAdded, Name: "VolumeMount", Fields: fieldDiffs(nil, flatStruct(m))})
		}
	}
	return out
}

// groupVolumes and taskVolumeMounts read a nil-able group's or task's
// volume blocks, for diffs.
func groupVolumes(tg *TaskGroup) map[string]*VolumeRequest {
	if tg == nil {
		return nil
	}
	return tg.Volumes
}

func taskVolumeMounts(t *Task) []*VolumeMount {
	if t == nil {
		return nil
	}
	return t.VolumeMounts
}
