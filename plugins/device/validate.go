package device

import (
	"errors"
	"fmt"
)

// ValidateFingerprint checks a plugin's device groups: every group has a
// vendor, type and name, no two groups share all three, every instance has
// an ID that is unique across the plugin's groups, and attributes are well
// formed. It returns every problem found, joined.
func ValidateFingerprint(groups []*DeviceGroup) error {
	var errs []error
	seenGroup := make(map[string]bool, len(groups))
	seenID := make(map[string]string)
	for i, g := range groups {
		if g == nil {
			errs = append(errs, fmt.Errorf("device group %d: nil", i))
			continue
		}
		key := g.Vendor + "/" + g.Type + "/" + g.Name
		switch {
		case g.Vendor == "" || g.Type == "" || g.Name == "":
			errs = append(errs, fmt.Errorf("device group %d (%q): empty vendor, type or name", i, key))
		case seenGroup[key]:
			errs = append(errs, fmt.Errorf("device group %q: declared twice", key))
		}
		seenGroup[key] = true
		for name, a := range g.Attributes {
			if err := a.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("device group %q: attribute %q: %w", key, name, err))
			}
		}
		for j, d := range g.Devices {
			switch {
			case d == nil:
				errs = append(errs, fmt.Errorf("device group %q: instance %d: nil", key, j))
			case d.ID == "":
				errs = append(errs, fmt.Errorf("device group %q: instance %d: empty ID", key, j))
			case seenID[d.ID] != "":
				errs = append(errs, fmt.Errorf("device group %q: duplicate device ID %q (also in %q)", key, d.ID, seenID[d.ID]))
			default:
				seenID[d.ID] = key
			}
		}
	}
	return errors.Join(errs...)
}

// FilterStats keeps the statistics of devices the plugin fingerprinted
// (known: device ID -> "vendor/type/name" of its group) and returns them with
// one error per statistic dropped: a group that is not the device's, a
// device that does not exist, an instance without values.
func FilterStats(groups []*DeviceGroupStats, known map[string]string) ([]*DeviceGroupStats, error) {
	var errs []error
	out := make([]*DeviceGroupStats, 0, len(groups))
	for _, g := range groups {
		if g == nil {
			errs = append(errs, errors.New("nil device group stats"))
			continue
		}
		key := g.Vendor + "/" + g.Type + "/" + g.Name
		kept := &DeviceGroupStats{Vendor: g.Vendor, Type: g.Type, Name: g.Name,
			InstanceStats: make(map[string]*DeviceStats, len(g.InstanceStats))}
		for id, s := range g.InstanceStats {
			switch group, ok := known[id]; {
			case !ok:
				errs = append(errs, fmt.Errorf("stats for device %q of %q: no such device", id, key))
			case group != key:
				errs = append(errs, fmt.Errorf("stats for device %q of %q: the device belongs to %q", id, key, group))
			case s == nil || (s.Summary == nil && s.Stats == nil):
				errs = append(errs, fmt.Errorf("stats for device %q of %q: no values", id, key))
			default:
				kept.InstanceStats[id] = s
			}
		}
		if len(kept.InstanceStats) > 0 {
			out = append(out, kept)
		}
	}
	return out, errors.Join(errs...)
}

// ValidateReservation checks a Reserve response: device nodes and mounts
// need both paths, and cgroup permissions are made of "r", "w" and "m".
func ValidateReservation(r *ContainerReservation) error {
	if r == nil {
		return errors.New("reserve: plugin returned no reservation")
	}
	var errs []error
	for k := range r.Envs {
		if k == "" {
			errs = append(errs, errors.New("reserve: empty environment variable name"))
		}
	}
	for i, m := range r.Mounts {
		if m == nil || m.TaskPath == "" || m.HostPath == "" {
			errs = append(errs, fmt.Errorf("reserve: mount %d: needs a task path and a host path", i))
		}
	}
	for i, d := range r.Devices {
		if d == nil || d.TaskPath == "" || d.HostPath == "" {
			errs = append(errs, fmt.Errorf("reserve: device %d: needs a task path and a host path", i))
			continue
		}
		for _, c := range d.CgroupPerms {
			if c != 'r' && c != 'w' && c != 'm' {
				errs = append(errs, fmt.Errorf("reserve: device %q: bad cgroup permissions %q", d.TaskPath, d.CgroupPerms))
				break
			}
		}
	}
	return errors.Join(errs...)
}
