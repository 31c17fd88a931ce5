package httpapi

import (
	"fmt"
	"maps"
	"slices"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// volumes converts a group's volume blocks. A block's Name defaults to
// its key. Nomad's fields for CSI and dynamic host volumes (sticky,
// access_mode, attachment_mode, mount_options, per_alloc) are refused:
// drover offers host volumes only, and a job that relies on them would
// run with storage other than it asked for. structs.Job.Validate checks
// the rest (type, source, names).
func (c *converter) volumes(where string, in map[string]*api.VolumeRequest) map[string]*structs.VolumeRequest {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]*structs.VolumeRequest, len(in))
	for _, key := range slices.Sorted(maps.Keys(in)) {
		v := in[key]
		vwhere := fmt.Sprintf("%s, volume %q", where, key)
		if v == nil {
			c.errorf("%s is null", vwhere)
			continue
		}
		name := v.Name
		if name == "" {
			name = key
		}
		for _, f := range []struct {
			field, block string
			set          bool
		}{
			{"Sticky", "sticky", v.Sticky},
			{"AccessMode", "access_mode", v.AccessMode != ""},
			{"AttachmentMode", "attachment_mode", v.AttachmentMode != ""},
			{"MountOptions", "mount_options", !isUnsetJSON(v.MountOptions)},
			{"PerAlloc", "per_alloc", v.PerAlloc},
		} {
			if f.set {
				c.errorf("%s: %s (%s) applies to CSI and dynamic host volumes, which drover does not support: remove it (host volumes need only type, source and read_only)",
					vwhere, f.block, f.field)
			}
		}
		out[key] = &structs.VolumeRequest{Name: name, Type: v.Type, Source: v.Source, ReadOnly: v.ReadOnly}
	}
	return out
}

// volumeMounts converts a task's volume_mount blocks. An unset
// propagation mode is "private", as in Nomad. A mount that explicitly asks
// for read_only = false of a volume whose block is read-only is mounted
// read-only all the same (as Nomad does), and the user is warned.
func (c *converter) volumeMounts(where string, in []*api.VolumeMount, groupVolumes map[string]*api.VolumeRequest) []*structs.VolumeMount {
	if len(in) == 0 {
		return nil
	}
	out := make([]*structs.VolumeMount, 0, len(in))
	for i, m := range in {
		mwhere := fmt.Sprintf("%s, volume_mount %d", where, i+1)
		if m == nil {
			c.errorf("%s is null", mwhere)
			continue
		}
		if deref(m.SELinuxLabel) != "" {
			c.errorf("%s: selinux_label (SELinuxLabel) is not supported by drover yet: remove it", mwhere)
		}
		vm := &structs.VolumeMount{
			Volume:          deref(m.Volume),
			Destination:     deref(m.Destination),
			ReadOnly:        deref(m.ReadOnly),
			PropagationMode: deref(m.PropagationMode),
		}
		if m.PropagationMode == nil {
			vm.PropagationMode = structs.VolumeMountPropagationPrivate
		}
		if v := groupVolumes[vm.Volume]; v != nil && v.ReadOnly && m.ReadOnly != nil && !*m.ReadOnly {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: volume %q is read_only in its volume block, so this mount is read-only despite read_only = false",
				mwhere, vm.Volume))
		}
		out = append(out, vm)
	}
	return out
}
