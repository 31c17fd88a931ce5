package exec

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// taskMounts are the host paths the client asked to mount into the task
// (TaskConfig.Mounts: its volume_mount blocks' host volumes and what its
// device plugins asked for), as bind mounts into the task's root. They are
// made inside the task's own mount namespace only (isolation.Spec.Mounts):
// the host never sees them, and they vanish with the task, so a stopped
// task, a crashed agent or a removed allocation leaves no mount behind.
//
// They are ordered so that a mount is made after those above it (a
// volume at /data before one at /data/cache), whatever order the job
// lists them in; the sort is stable, so mounts at the same depth keep
// their order.
func taskMounts(cfg *drivers.TaskConfig) []isolation.Mount {
	out := make([]isolation.Mount, 0, len(cfg.Mounts))
	for _, m := range cfg.Mounts {
		if m == nil {
			continue
		}
		out = append(out, isolation.Mount{Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.Readonly})
	}
	slices.SortStableFunc(out, func(a, b isolation.Mount) int {
		return cmp.Compare(pathDepth(a.Target), pathDepth(b.Target))
	})
	return out
}

// pathDepth is the number of elements of a clean absolute path.
func pathDepth(p string) int {
	return strings.Count(strings.TrimSuffix(filepath.Clean("/"+p), "/"), "/")
}
