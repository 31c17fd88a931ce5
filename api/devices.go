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

// Affinity is a soft placement preference; Weight is in [-100, 100].
type Affinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  *int8 `json:",omitempty"`
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
