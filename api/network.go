package api

// NetworkResource is a group's (or, in older jobs, a task's resources')
// network block: its networking mode and the ports it asks for. Field
// names and JSON shape are Nomad's.
type NetworkResource struct {
	// Mode is the group's networking mode: "host" (the default), "none",
	// "bridge" or "cni/<name>".
	Mode   string `json:",omitempty"`
	Device string `json:",omitempty"`
	CIDR   string `json:",omitempty"`
	IP     string `json:",omitempty"`
	// DNS configures the resolver of the group's network namespace.
	DNS *DNSConfig `json:",omitempty"`
	// ReservedPorts are the ports with a static number; DynamicPorts the
	// ports the scheduler picks.
	ReservedPorts []Port `json:",omitempty"`
	DynamicPorts  []Port `json:",omitempty"`
	// Hostname is the hostname of the group's network namespace.
	Hostname string `json:",omitempty"`
	// MBits is deprecated in Nomad; kept for wire compatibility.
	MBits *int `json:",omitempty"`
	// CNI passes arguments to a "cni/<name>" network.
	CNI *CNIConfig `json:",omitempty"`
}

// Port is one port of a network block: Label names it, Value is its
// static host port (0: dynamic), To the port inside the task's network.
type Port struct {
	Label           string `json:",omitempty"`
	Value           int    `json:",omitempty"`
	To              int    `json:",omitempty"`
	HostNetwork     string `json:",omitempty"`
	IgnoreCollision bool   `json:",omitempty"`
}

// DNSConfig is a network block's dns block.
type DNSConfig struct {
	Servers  []string `json:",omitempty"`
	Searches []string `json:",omitempty"`
	Options  []string `json:",omitempty"`
}

// CNIConfig is a network block's cni block.
type CNIConfig struct {
	Args map[string]string `json:",omitempty"`
}
