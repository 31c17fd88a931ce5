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
}

// volume validates "host:container[:options]" and returns the bind with
// its host path resolved.
func (h hostPaths) volume(v string) (string, error) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return "", fmt.Errorf("volume %q: want \"host_path:container_path[:options]\"", v)
	}
	host, err := h.resolve(parts[0])
	if err != nil {
		return "", fmt.Errorf("volume %q: %w", v, err)
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

// mount converts a mount block.
func (h hostPaths) mount(m MountConfig) (mount.Mount, error) {
	if !path.IsAbs(m.Target) {
		return mount.Mount{}, fmt.Errorf("target %q must be an absolute path", m.Target)
	}
	out := mount.Mount{Type: mount.Type(m.Type), Target: m.Target, ReadOnly: m.ReadOnly}
	switch m.Type {
	case "bind":
		if m.Source == "" {
			return mount.Mount{}, errors.New("bind mount without a source")
		}
		src, err := h.resolve(m.Source)
		if err != nil {
			return mount.Mount{}, err
		}
		out.Source = src
		if len(m.BindOptions) > 0 && m.BindOptions[0].Propagation != "" {
			out.BindOptions = &mount.BindOptions{Propagation: mount.Propagation(m.BindOptions[0].Propagation)}
		}
	case "tmpfs":
		if m.Source != "" {
			return mount.Mount{}, errors.New("a tmpfs mount takes no source")
		}
		if len(m.TmpfsOptions) > 0 {
			o := m.TmpfsOptions[0]
			out.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: o.Size, Mode: os.FileMode(o.Mode)}
		}
	default:
		return mount.Mount{}, fmt.Errorf("mount type %q is not supported: use \"bind\" or \"tmpfs\"", m.Type)
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
