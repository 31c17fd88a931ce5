package docker

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moby/moby/api/types/mount"
)

// errHostPathsDisabled says which plugin option lets tasks bind host paths.
const errHostPathsDisabled = "binding host paths outside the allocation needs volumes { enabled = true } in the docker plugin's config"

// hostPaths checks and resolves the host side of a task's volumes and bind
// mounts. As Nomad's driver: a relative path is relative to the task
// directory; any path that resolves inside the allocation directory is
// allowed; others only when the plugin's volumes are enabled.
type hostPaths struct {
	taskDir  string
	allocDir string
	enabled  bool
	// selinuxLabel ("z", "Z" or "") is added to the options of volumes.
	selinuxLabel string
	// volumeDriver is the task's volume_driver: the host side of a
	// volumes entry that is not an absolute path is then a volume name.
	volumeDriver string
}

// Mount types of a mount block; an unset type is a volume, as in Nomad.
const (
	mountTypeVolume = "volume"
	mountTypeBind   = "bind"
	mountTypeTmpfs  = "tmpfs"
)

// volume validates "host:container[:options]" and returns the bind with
// its host path resolved.
func (h hostPaths) volume(v string) (string, error) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return "", fmt.Errorf("volume %q: want \"host_path:container_path[:options]\"", v)
	}
	host := parts[0]
	if h.volumeDriver == "" || filepath.IsAbs(host) {
		var err error
		if host, err = h.resolve(host); err != nil {
			return "", fmt.Errorf("volume %q: %w", v, err)
		}
	}
	if !path.IsAbs(parts[1]) {
		return "", fmt.Errorf("volume %q: the container path must be absolute", v)
	}
	parts[0] = host
	if h.selinuxLabel != "" {
		if len(parts) == 3 {
			parts[2] += "," + h.selinuxLabel
		} else {
			parts = append(parts, h.selinuxLabel)
		}
	}
	return strings.Join(parts, ":"), nil
}

// mount converts a mount block. A volume mount with a driver_config
// needs the plugin's volumes enabled (a driver's options can bind any host
// path); a plain named volume lives in the daemon's storage and does not.
// Each type takes only its own options block.
func (h hostPaths) mount(m MountConfig) (mount.Mount, error) {
	if !path.IsAbs(m.Target) {
		return mount.Mount{}, fmt.Errorf("target %q must be an absolute path", m.Target)
	}
	typ := m.Type
	if typ == "" {
		typ = mountTypeVolume
	}
	vo, bind, tmpfs := m.VolumeOptions, len(m.BindOptions) > 0, len(m.TmpfsOptions) > 0
	hasVolumeOptions := vo.NoCopy || len(vo.Labels) > 0 || vo.DriverConfig.set()
	for _, o := range []struct {
		set   bool
		block string
		typ   string
	}{{hasVolumeOptions, "volume_options", mountTypeVolume}, {bind, "bind_options", mountTypeBind}, {tmpfs, "tmpfs_options", mountTypeTmpfs}} {
		if o.set && typ != o.typ {
			return mount.Mount{}, fmt.Errorf("%s applies to mounts of type %q, not %q", o.block, o.typ, typ)
		}
	}
	out := mount.Mount{Type: mount.Type(typ), Target: m.Target, ReadOnly: m.ReadOnly}
	switch typ {
	case mountTypeVolume:
		if vo.DriverConfig.set() && !h.enabled {
			return mount.Mount{}, errors.New("volume_options.driver_config needs volumes { enabled = true } in the docker plugin's config: a volume driver's options can reach any host path")
		}
		out.Source = m.Source // "" is an anonymous volume, removed with the container
		if hasVolumeOptions {
			out.VolumeOptions = &mount.VolumeOptions{NoCopy: vo.NoCopy, Labels: vo.Labels}
			if vo.DriverConfig.set() {
				out.VolumeOptions.DriverConfig = &mount.Driver{Name: vo.DriverConfig.Name, Options: vo.DriverConfig.Options}
			}
		}
	case mountTypeBind:
		if m.Source == "" {
			return mount.Mount{}, errors.New("bind mount without a source")
		}
		src, err := h.resolve(m.Source)
		if err != nil {
			return mount.Mount{}, err
		}
		out.Source = src
		if bind && m.BindOptions[0].Propagation != "" {
			out.BindOptions = &mount.BindOptions{Propagation: mount.Propagation(m.BindOptions[0].Propagation)}
		}
	case mountTypeTmpfs:
		if m.Source != "" {
			return mount.Mount{}, errors.New("a tmpfs mount takes no source")
		}
		if tmpfs {
			o := m.TmpfsOptions[0]
			if o.Size < 0 || o.Mode < 0 {
				return mount.Mount{}, errors.New("tmpfs_options size and mode must not be negative")
			}
			out.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: o.Size, Mode: os.FileMode(o.Mode)}
		}
	default:
		return mount.Mount{}, fmt.Errorf("mount type %q is not supported: use %q, %q or %q", m.Type, mountTypeVolume, mountTypeBind, mountTypeTmpfs)
	}
	return out, nil
}

// resolve returns the host path p names: relative paths are under the
// task directory. With volumes disabled the path must resolve, following
// symbolic links (which a task may plant in its directories), inside the
// allocation directory; the resolved path is returned so that the daemon
// binds what was checked.
func (h hostPaths) resolve(p string) (string, error) {
	full := p
	if !filepath.IsAbs(p) {
		if h.taskDir == "" {
			return "", errors.New("relative host path but the task has no directory")
		}
		full = filepath.Join(h.taskDir, p)
	}
	full = filepath.Clean(full)
	if h.enabled {
		return full, nil
	}
	root := h.allocDir
	if root == "" {
		root = h.taskDir
	}
	if root == "" {
		return "", fmt.Errorf("host path %q: %s", p, errHostPathsDisabled)
	}
	realRoot, err := resolveExisting(filepath.Clean(root))
	if err != nil {
		return "", fmt.Errorf("resolve the allocation directory: %w", err)
	}
	real, err := resolveExisting(full)
	if err != nil {
		return "", fmt.Errorf("host path %q: %w", p, err)
	}
	if !within(realRoot, real) {
		return "", fmt.Errorf("host path %q is outside the allocation directory; %s", p, errHostPathsDisabled)
	}
	return real, nil
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator)) || root == string(filepath.Separator)
}

// resolveExisting resolves the symbolic links of the longest existing
// prefix of the absolute, clean path p and appends the rest, which does
// not exist (not even as a dangling link, which the daemon would follow
// when it creates a missing bind source).
func resolveExisting(p string) (string, error) {
	var rest []string
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(cur); lerr == nil {
			return "", fmt.Errorf("%s is a symbolic link to a missing target", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}
