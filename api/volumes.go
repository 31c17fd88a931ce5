package api

import "encoding/json"

// VolumeRequest is a group's `volume "NAME" { ... }` block: a volume the
// group needs on its node. Field names and JSON shape are Nomad's.
type VolumeRequest struct {
	Name string
	// Type is "host" (a client's host_volume); Nomad's "csi" is refused.
	Type string
	// Source is the name of the client's host volume.
	Source   string
	ReadOnly bool

	// Nomad's fields for CSI and dynamic host volumes, which drover does
	// not support: a job that sets one is refused.
	Sticky         bool            `json:",omitempty"`
	AccessMode     string          `json:",omitempty"`
	AttachmentMode string          `json:",omitempty"`
	MountOptions   json.RawMessage `json:",omitempty"`
	PerAlloc       bool            `json:",omitempty"`
}

// VolumeMount is a task's volume_mount block: where one of its group's
// volumes appears inside the task. Nil fields are unset.
type VolumeMount struct {
	Volume          *string `json:",omitempty"`
	Destination     *string `json:",omitempty"`
	ReadOnly        *bool   `json:",omitempty"`
	PropagationMode *string `json:",omitempty"`
	// SELinuxLabel is Nomad's; drover refuses a job that sets it.
	SELinuxLabel *string `json:",omitempty"`
}

// HostVolumeInfo is a host volume a node offers (GET /v1/node/:id,
// Node.HostVolumes): the client's host_volume block.
type HostVolumeInfo struct {
	Name     string
	Path     string
	ReadOnly bool
}
