package api

import (
	"encoding/json"
	"fmt"
)

// RequestedDevice is a task's request for device instances: the JSON shape
// of each element of Resources.Devices.
type RequestedDevice struct {
	// Name is "type", "vendor/type" or "vendor/type/name" ("nvidia/gpu").
	Name string
	// Count is how many instances; nil: 1.
	Count *uint64 `json:",omitempty"`
	// Constraints select among device groups (${device.attr.memory},
	// ${device.vendor}, ${device.model}).
	Constraints []*Constraint `json:",omitempty"`
	// Affinities prefer some device groups over others.
	Affinities []*Affinity `json:",omitempty"`
}

// RequestedDevices decodes Resources.Devices; nil when it is unset.
func (r *Resources) RequestedDevices() ([]*RequestedDevice, error) {
	if r == nil || len(r.Devices) == 0 || string(r.Devices) == "null" {
		return nil, nil
	}
	var out []*RequestedDevice
	if err := json.Unmarshal(r.Devices, &out); err != nil {
		return nil, fmt.Errorf("decode devices: %w", err)
	}
	return out, nil
}

// SetRequestedDevices encodes devs into Resources.Devices.
func (r *Resources) SetRequestedDevices(devs []*RequestedDevice) error {
	if devs == nil {
		r.Devices = nil
		return nil
	}
	b, err := json.Marshal(devs)
	if err != nil {
		return fmt.Errorf("encode devices: %w", err)
	}
	r.Devices = b
	return nil
}

// NodeDeviceResource is a group of identical devices on a node
// (Node.NodeResources.Devices).
type NodeDeviceResource struct {
	Vendor     string
	Type       string
	Name       string
	Instances  []*NodeDevice
	Attributes map[string]*Attribute
}

// ID renders the group as "vendor/type/name".
func (r *NodeDeviceResource) ID() string { return r.Vendor + "/" + r.Type + "/" + r.Name }

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

// Attribute is a typed value with an optional unit; one value is set.
type Attribute struct {
	FloatVal  *float64 `json:"Float,omitempty"`
	IntVal    *int64   `json:"Int,omitempty"`
	StringVal *string  `json:"String,omitempty"`
	BoolVal   *bool    `json:"Bool,omitempty"`
	Unit      string   `json:",omitempty"`
}

// String renders the attribute as a person reads it ("16 GiB").
func (a *Attribute) String() string {
	if a == nil {
		return ""
	}
	var v string
	switch {
	case a.IntVal != nil:
		v = fmt.Sprint(*a.IntVal)
	case a.FloatVal != nil:
		v = fmt.Sprint(*a.FloatVal)
	case a.BoolVal != nil:
		v = fmt.Sprint(*a.BoolVal)
	case a.StringVal != nil:
		v = *a.StringVal
	}
	if a.Unit != "" {
		v += " " + a.Unit
	}
	return v
}

// AllocatedDeviceResource is the set of device instances given to a task
// (AllocatedTaskResources.Devices).
type AllocatedDeviceResource struct {
	Vendor    string
	Type      string
	Name      string
	DeviceIDs []string
}
