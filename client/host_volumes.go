package client

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/drover-io/drover/structs"
)

// hostVolumes checks the host volumes of the client's config and returns
// them as the node reports them: each name valid, each path absolute and
// existing, with its symbolic links resolved once, here, so that every
// mount binds the directory the operator meant (a link in the path would
// otherwise be copied into an exec task's root as a dangling link). A
// problem fails the agent's start with an error naming the volume.
func hostVolumes(in map[string]*structs.ClientHostVolumeConfig) (map[string]*structs.ClientHostVolumeConfig, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]*structs.ClientHostVolumeConfig, len(in))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(in)) {
		hv := in[name]
		if hv == nil {
			errs = append(errs, fmt.Errorf("host_volume %q has no configuration", name))
			continue
		}
		if err := structs.ValidatePathName("host_volume name", name); err != nil {
			errs = append(errs, err)
			continue
		}
		if !filepath.IsAbs(hv.Path) {
			errs = append(errs, fmt.Errorf("host_volume %q: path %q must be absolute", name, hv.Path))
			continue
		}
		real, err := filepath.EvalSymlinks(hv.Path)
		if err == nil {
			_, err = os.Stat(real)
		}
		switch {
		case errors.Is(err, os.ErrNotExist):
			errs = append(errs, fmt.Errorf("host_volume %q: path %q does not exist: create it (drover does not) or fix the path", name, hv.Path))
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("host_volume %q: path %q: %w", name, hv.Path, err))
			continue
		}
		out[name] = &structs.ClientHostVolumeConfig{Name: name, Path: real, ReadOnly: hv.ReadOnly}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("client: %w", errors.Join(errs...))
	}
	return out, nil
}
