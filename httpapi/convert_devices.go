package httpapi

import (
	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// devices converts a task's device requests (resources { device "NAME" {...} }).
func (c *converter) devices(where string, in *api.Resources) []*structs.RequestedDevice {
	reqs, err := in.RequestedDevices()
	if err != nil {
		c.errorf("%s: device blocks: %v", where, err)
		return nil
	}
	if reqs == nil {
		return nil
	}
	out := make([]*structs.RequestedDevice, 0, len(reqs))
	for i, r := range reqs {
		if r == nil || r.Name == "" {
			c.errorf("%s: device %d: needs a name (\"type\", \"vendor/type\" or \"vendor/type/name\")", where, i+1)
			continue
		}
		dw := where + " device " + r.Name
		d := &structs.RequestedDevice{Name: r.Name, Count: 1, Constraints: c.constraints(dw, r.Constraints)}
		if r.Count != nil {
			d.Count = *r.Count
		}
		if d.Count == 0 {
			c.errorf("%s: count must be at least 1", dw)
		}
		for j, a := range r.Affinities {
			if a == nil {
				c.errorf("%s: affinity %d is null", dw, j+1)
				continue
			}
			w := structs.DefaultPlacementWeight
			if a.Weight != nil {
				w = *a.Weight
			}
			if w == 0 || w < -100 || w > 100 {
				c.errorf("%s: affinity weight %d: must be in [-100, 100] and not 0", dw, w)
			}
			op := a.Operand
			if op == "" {
				op = structs.ConstraintEqual
			}
			d.Affinities = append(d.Affinities, &structs.Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: op, Weight: w})
		}
		out = append(out, d)
	}
	return out
}
