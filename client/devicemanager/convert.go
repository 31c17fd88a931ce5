package devicemanager

import (
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// groupKey is a device group's "vendor/type/name".
func groupKey(vendor, typ, name string) string { return vendor + "/" + typ + "/" + name }

// nodeDevices converts a validated fingerprint into the node's device
// groups.
func nodeDevices(groups []*device.DeviceGroup) []*structs.NodeDeviceResource {
	out := make([]*structs.NodeDeviceResource, 0, len(groups))
	for _, g := range groups {
		r := &structs.NodeDeviceResource{Vendor: g.Vendor, Type: g.Type, Name: g.Name,
			Instances: make([]*structs.NodeDevice, 0, len(g.Devices))}
		for _, d := range g.Devices {
			nd := &structs.NodeDevice{ID: d.ID, Healthy: d.Healthy, HealthDescription: d.HealthDesc}
			if d.HwLocality != nil {
				nd.Locality = &structs.NodeDeviceLocality{PciBusID: d.HwLocality.PciBusID}
			}
			r.Instances = append(r.Instances, nd)
		}
		if len(g.Attributes) > 0 {
			r.Attributes = make(map[string]*structs.Attribute, len(g.Attributes))
			for k, a := range g.Attributes {
				c := a.Copy()
				r.Attributes[k] = &structs.Attribute{Float: c.Float, Int: c.Int, String: c.String, Bool: c.Bool, Unit: c.Unit}
			}
		}
		out = append(out, r)
	}
	return out
}

// unhealthy returns copies of groups with every instance unhealthy for
// reason.
func unhealthy(groups []*structs.NodeDeviceResource, reason string) []*structs.NodeDeviceResource {
	out := make([]*structs.NodeDeviceResource, len(groups))
	for i, g := range groups {
		c := g.Copy()
		for _, d := range c.Instances {
			d.Healthy, d.HealthDescription = false, reason
		}
		out[i] = c
	}
	return out
}
