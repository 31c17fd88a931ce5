package agent

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/drover-io/drover/structs"
)

// HostVolumeConfig is one `client { host_volume "NAME" { ... } }` block: a
// host directory the node offers to jobs under NAME, which a group's
// `volume { type = "host", source = NAME }` asks for (docs/volumes.md).
type HostVolumeConfig struct {
	// Path is the absolute host path; it must exist when the agent starts.
	Path string
	// ReadOnly offers the volume for read-only mounts only.
	ReadOnly bool
}

// hostVolumeBlock is a host_volume block as a file writes it.
type hostVolumeBlock struct {
	Path     *string
	ReadOnly *bool
}

// decodeHostVolume reads one `host_volume "NAME" { path, read_only }`.
func (c *clientBlock) decodeHostVolume(d *decoder, name string, pos cfgPos, body *cfgValue) {
	if _, dup := c.HostVolumes[name]; dup {
		d.errorf(pos, "client.host_volume %q is defined twice in one file", name)
		return
	}
	if err := structs.ValidatePathName("host_volume name", name); err != nil {
		d.errorf(pos, "client.host_volume: %v", err)
		return
	}
	hv := &hostVolumeBlock{}
	p := "client.host_volume"
	d.decodeSection(section{path: p, keys: map[string]keyFunc{
		"path":      strKey(&hv.Path, p),
		"read_only": boolKey(&hv.ReadOnly, p),
	}}, body)
	if hv.Path == nil || *hv.Path == "" {
		d.errorf(pos, "client.host_volume %q needs a path: host_volume %q { path = \"/srv/%s\" }", name, name, name)
		return
	}
	if !filepath.IsAbs(*hv.Path) {
		d.errorf(pos, "client.host_volume %q: path %q must be absolute", name, *hv.Path)
		return
	}
	if c.HostVolumes == nil {
		c.HostVolumes = map[string]*hostVolumeBlock{}
	}
	c.HostVolumes[name] = hv
}

// mergeHostVolumes applies a file's host_volume blocks: a block replaces
// the one of the same name that an earlier file defined.
func (c *ClientConfig) mergeHostVolumes(in map[string]*hostVolumeBlock) {
	for _, name := range slices.Sorted(maps.Keys(in)) {
		b := in[name]
		hv := HostVolumeConfig{Path: filepath.Clean(*b.Path)}
		setVal(&hv.ReadOnly, b.ReadOnly)
		if c.HostVolumes == nil {
			c.HostVolumes = map[string]HostVolumeConfig{}
		}
		c.HostVolumes[name] = hv
	}
}

// clientHostVolumes returns the host volumes for the client.
func (c *ClientConfig) clientHostVolumes() map[string]*structs.ClientHostVolumeConfig {
	if len(c.HostVolumes) == 0 {
		return nil
	}
	out := make(map[string]*structs.ClientHostVolumeConfig, len(c.HostVolumes))
	for name, hv := range c.HostVolumes {
		out[name] = &structs.ClientHostVolumeConfig{Name: name, Path: hv.Path, ReadOnly: hv.ReadOnly}
	}
	return out
}

// String describes the volume for logs.
func (h HostVolumeConfig) String() string {
	return fmt.Sprintf("%s (read_only=%t)", h.Path, h.ReadOnly)
}
