package structs

import (
	"fmt"
	"strings"
)

// RequestedDevice is a task's request for device instances, named
// "type", "vendor/type" or "vendor/type/name" (e.g. "nvidia/gpu").
type RequestedDevice struct {
	Name        string
	Count       uint64
	Constraints []*Constraint
	Affinities  []*Affinity
}

// ID parses the request's name into a DeviceIDTuple; empty parts match any.
func (r *RequestedDevice) ID() *DeviceIDTuple {
	parts := strings.SplitN(r.Name, "/", 3)
	switch len(parts) {
	case 1:
		return &DeviceIDTuple{Type: parts[0]}
	case 2:
		return &DeviceIDTuple{Vendor: parts[0], Type: parts[1]}
	default:
		return &DeviceIDTuple{Vendor: parts[0], Type: parts[1], Name: parts[2]}
	}
}

// Copy returns a deep copy of r.
func (r *RequestedDevice) Copy() *RequestedDevice {
	if r == nil {
		return nil
	}
	c := *r
	c.Constraints = copyConstraints(r.Constraints)
	c.Affinities = copyAffinities(r.Affinities)
	return &c
}

// DeviceIDTuple names a device group: vendor, type and model name.
type DeviceIDTuple struct {
	Vendor string
	Type   string
	Name   string
}

// String renders "vendor/type/name".
func (d *DeviceIDTuple) String() string { return d.Vendor + "/" + d.Type + "/" + d.Name }

// Matches reports whether the (possibly partial) requested tuple r matches
// the concrete tuple d.
func (d *DeviceIDTuple) Matches(r *DeviceIDTuple) bool {
	if r == nil {
		return false
	}
	return (r.Vendor == "" || r.Vendor == d.Vendor) &&
		(r.Type == "" || r.Type == d.Type) &&
		(r.Name == "" || r.Name == d.Name)
}

// NodeDeviceResource is a group of identical devices on a node.
type NodeDeviceResource struct {
	Vendor     string
	Type       string
	Name       string
	Instances  []*NodeDevice
	Attributes map[string]*Attribute
}

// ID returns the group's tuple.
func (n *NodeDeviceResource) ID() *DeviceIDTuple {
	return &DeviceIDTuple{Vendor: n.Vendor, Type: n.Type, Name: n.Name}
}

// Copy returns a deep copy of n.
func (n *NodeDeviceResource) Copy() *NodeDeviceResource {
	if n == nil {
		return nil
	}
	c := *n
	c.Instances = make([]*NodeDevice, len(n.Instances))
	for i, d := range n.Instances {
		dc := *d
		if d.Locality != nil {
			l := *d.Locality
			dc.Locality = &l
		}
		c.Instances[i] = &dc
	}
	if n.Attributes != nil {
		c.Attributes = make(map[string]*Attribute, len(n.Attributes))
		for k, v := range n.Attributes {
			c.Attributes[k] = v.Copy()
		}
	}
	return &c
}

// NodeDevice is one device instance.
type NodeDevice struct {
	ID                string
	Healthy           bool
	HealthDescription string
	Locality          *NodeDeviceLocality
}

// NodeDeviceLocality is where a device sits in the hardware.
type NodeDeviceLocality struct {
	PciBusID string
}

// Attribute is a typed value with an optional unit ("16 GiB" is Int 16,
// Unit "GiB"). Exactly one of the value fields is set.
type Attribute struct {
	Float  *float64 `json:",omitempty"`
	Int    *int64   `json:",omitempty"`
	String *string  `json:",omitempty"`
	Bool   *bool    `json:",omitempty"`
	Unit   string   `json:",omitempty"`
}

// Copy returns a copy of a.
func (a *Attribute) Copy() *Attribute {
	if a == nil {
		return nil
	}
	c := *a
	if a.Float != nil {
		v := *a.Float
		c.Float = &v
	}
	if a.Int != nil {
		v := *a.Int
		c.Int = &v
	}
	if a.String != nil {
		v := *a.String
		c.String = &v
	}
	if a.Bool != nil {
		v := *a.Bool
		c.Bool = &v
	}
	return &c
}

// GoString renders the attribute as a person reads it ("16 GiB").
func (a *Attribute) GoString() string {
	var v string
	switch {
	case a.Int != nil:
		v = fmt.Sprint(*a.Int)
	case a.Float != nil:
		v = fmt.Sprint(*a.Float)
	case a.Bool != nil:
		v = fmt.Sprint(*a.Bool)
	case a.String != nil:
		v = *a.String
	}
	if a.Unit != "" {
		v += " " + a.Unit
	}
	return v
}

// AllocatedDeviceResource is the set of device instances given to a task.
type AllocatedDeviceResource struct {
	Vendor    string
	Type      string
	Name      string
	DeviceIDs []string
}

// ID returns the group's tuple.
func (a *AllocatedDeviceResource) ID() *DeviceIDTuple {
	return &DeviceIDTuple{Vendor: a.Vendor, Type: a.Type, Name: a.Name}
}
