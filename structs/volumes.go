package structs

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Volume types of a group's volume block (VolumeRequest.Type).
const (
	// VolumeTypeHost is a host volume: a directory the node's operator
	// offers under a name (the client's host_volume block).
	VolumeTypeHost = "host"
	// VolumeTypeCSI is a CSI volume, which drover does not support; the
	// name is kept to tell the user so.
	VolumeTypeCSI = "csi"
)

// Propagation modes of a volume_mount (VolumeMount.PropagationMode).
const (
	// VolumeMountPropagationPrivate keeps mounts made later on either
	// side from showing on the other: the default, and the only mode
	// drover implements.
	VolumeMountPropagationPrivate = "private"
	// VolumeMountPropagationHostToTask and VolumeMountPropagationBidirectional
	// are Nomad's other modes, refused with a clear error.
	VolumeMountPropagationHostToTask    = "host-to-task"
	VolumeMountPropagationBidirectional = "bidirectional"
)

// maxMountDestination bounds a volume_mount's destination: Linux's
// PATH_MAX.
const maxMountDestination = 4096

// Paths inside a task where drivers with filesystem isolation mount the
// task's own directories; a volume_mount may not take their place.
var reservedMountDestinations = []string{"/alloc", "/local", "/secrets"}

// VolumeRequest is one `volume "NAME" { ... }` block of a group: a volume
// the group needs on its node, which its tasks mount with volume_mount.
// The scheduler places the group only on nodes that offer Source
// (Node.HostVolumes), writable unless ReadOnly.
type VolumeRequest struct {
	// Name is the block's label, which volume_mount blocks refer to.
	Name string
	// Type is VolumeTypeHost.
	Type string
	// Source is the name of the node's host volume.
	Source string
	// ReadOnly asks only for read access: every mount of the volume is
	// read-only, and a node that offers the volume read-only qualifies.
	ReadOnly bool
}

// Copy returns a copy of v.
func (v *VolumeRequest) Copy() *VolumeRequest {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

// VolumeMount is one volume_mount block of a task: where one of its
// group's volumes appears inside the task.
type VolumeMount struct {
	// Volume names the group's volume block.
	Volume string
	// Destination is the absolute path inside the task.
	Destination string
	// ReadOnly mounts the volume read-only; it cannot make a read-only
	// volume writable (the effective mode is read-only when the node's
	// host volume, the group's volume or the mount says so).
	ReadOnly bool
	// PropagationMode is "" or VolumeMountPropagationPrivate.
	PropagationMode string
}

// Copy returns a copy of m.
func (m *VolumeMount) Copy() *VolumeMount {
	if m == nil {
		return nil
	}
	c := *m
	return &c
}

// ClientHostVolumeConfig is a host volume a node offers: the client's
// `host_volume "NAME" { path = "...", read_only = ... }` block, reported
// in Node.HostVolumes.
type ClientHostVolumeConfig struct {
	Name string
	// Path is the absolute host path of the directory.
	Path string
	// ReadOnly offers the volume only for read-only mounts.
	ReadOnly bool
}

// Copy returns a copy of c.
func (c *ClientHostVolumeConfig) Copy() *ClientHostVolumeConfig {
	if c == nil {
		return nil
	}
	out := *c
	return &out
}

// copyVolumes returns a deep copy of a group's volumes.
func copyVolumes(in map[string]*VolumeRequest) map[string]*VolumeRequest {
	if in == nil {
		return nil
	}
	out := make(map[string]*VolumeRequest, len(in))
	for k, v := range in {
		out[k] = v.Copy()
	}
	return out
}

// copyVolumeMounts returns a deep copy of a task's volume mounts.
func copyVolumeMounts(in []*VolumeMount) []*VolumeMount {
	if in == nil {
		return nil
	}
	out := make([]*VolumeMount, len(in))
	for i, m := range in {
		out[i] = m.Copy()
	}
	return out
}

// CopyHostVolumes returns a deep copy of a node's host volumes.
func CopyHostVolumes(in map[string]*ClientHostVolumeConfig) map[string]*ClientHostVolumeConfig {
	if in == nil {
		return nil
	}
	out := make(map[string]*ClientHostVolumeConfig, len(in))
	for k, v := range in {
		out[k] = v.Copy()
	}
	return out
}

// volumeErrors returns the problems of the group's volume blocks and of
// its tasks' volume_mount blocks; group is the group's name as errors
// show it.
func (tg *TaskGroup) volumeErrors(group string) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, key := range slices.Sorted(maps.Keys(tg.Volumes)) {
		v := tg.Volumes[key]
		where := fmt.Sprintf("group %q, volume %q", group, key)
		if v == nil {
			add("%s: the block is empty", where)
			continue
		}
		if v.Name != "" && v.Name != key {
			add("%s: its Name %q differs from its key; they must be the same", where, v.Name)
		}
		if err := ValidatePathName("volume name", key); err != nil {
			add("group %q: %v", group, err)
		} else if key == "" {
			add("group %q: a volume block has no name: volume \"NAME\" { ... }", group)
		}
		switch v.Type {
		case VolumeTypeHost:
		case VolumeTypeCSI:
			add("%s: type %q: CSI volumes are not supported by drover; use a host volume (type = %q)", where, v.Type, VolumeTypeHost)
		case "":
			add("%s: type is missing: set type = %q", where, VolumeTypeHost)
		default:
			add("%s: type %q is invalid: use %q", where, v.Type, VolumeTypeHost)
		}
		if v.Source == "" {
			add("%s: source is missing: set it to the name of a client's host_volume", where)
		} else if err := ValidatePathName("source", v.Source); err != nil {
			add("%s: %v", where, err)
		}
	}
	for _, t := range tg.Tasks {
		errs = append(errs, t.volumeMountErrors(group, tg.Volumes)...)
	}
	return errs
}

// volumeMountErrors checks a task's volume_mount blocks against its
// group's volumes.
func (t *Task) volumeMountErrors(group string, volumes map[string]*VolumeRequest) []error {
	var errs []error
	seen := map[string]int{}
	for i, m := range t.VolumeMounts {
		where := fmt.Sprintf("group %q, task %q, volume_mount %d", group, t.Name, i+1)
		add := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf(where+": "+format, args...))
		}
		if m == nil {
			add("the block is empty")
			continue
		}
		switch _, ok := volumes[m.Volume]; {
		case m.Volume == "":
			add("volume is missing: name one of the group's volume blocks")
		case !ok:
			add("volume %q is not defined: add a volume %q block to group %q, or mount one of its volumes (%s)",
				m.Volume, m.Volume, group, volumeNames(volumes))
		}
		dest, err := checkMountDestination(m.Destination)
		if err != nil {
			add("destination: %v", err)
		} else if prev, dup := seen[dest]; dup {
			add("destination %q is also the destination of volume_mount %d: mount one volume per path", m.Destination, prev)
		} else {
			seen[dest] = i + 1
		}
		switch m.PropagationMode {
		case "", VolumeMountPropagationPrivate:
		case VolumeMountPropagationHostToTask, VolumeMountPropagationBidirectional:
			add("propagation_mode %q is not supported by drover yet: remove it (the default is %q)", m.PropagationMode, VolumeMountPropagationPrivate)
		default:
			add("propagation_mode %q is invalid: use %q", m.PropagationMode, VolumeMountPropagationPrivate)
		}
	}
	return errs
}

// checkMountDestination checks a volume_mount's destination and returns
// it cleaned: an absolute path inside the task, neither its root nor one
// of the directories the drivers mount there themselves.
func checkMountDestination(dest string) (string, error) {
	if dest == "" {
		return "", fmt.Errorf("it is missing: set the absolute path inside the task, such as %q", "/data")
	}
	if len(dest) > maxMountDestination {
		return "", fmt.Errorf("%.32q... is %d bytes long: at most %d are allowed", dest, len(dest), maxMountDestination)
	}
	if err := checkCharacters("destination", dest); err != nil {
		return "", err
	}
	if !path.IsAbs(dest) {
		return "", fmt.Errorf("%q must be an absolute path inside the task, such as %q", dest, "/"+strings.TrimLeft(path.Clean(dest), "./"))
	}
	clean := path.Clean(dest)
	if clean == "/" {
		return "", fmt.Errorf("%q would hide the task's whole filesystem: mount the volume on a directory such as %q", dest, "/data")
	}
	if slices.Contains(reservedMountDestinations, clean) {
		return "", fmt.Errorf("%q is where the task's own %s directory is mounted: pick another path, or one below it such as %q", dest, clean[1:], clean+"/data")
	}
	return clean, nil
}

// volumeNames lists a group's volume names for an error message.
func volumeNames(volumes map[string]*VolumeRequest) string {
	if len(volumes) == 0 {
		return "it has none"
	}
	names := slices.Sorted(maps.Keys(volumes))
	for i, n := range names {
		names[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(names, ", ")
}

// MountReadOnly reports whether a task's mount m of the group's volume req
// is read-only: when the node's host volume, the group's volume block or
// the volume_mount block says so (a mount cannot make a read-only volume
// writable).
func MountReadOnly(hv *ClientHostVolumeConfig, req *VolumeRequest, m *VolumeMount) bool {
	return (hv != nil && hv.ReadOnly) || (req != nil && req.ReadOnly) || (m != nil && m.ReadOnly)
}
