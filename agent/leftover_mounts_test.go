package agent

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// unmountLeftovers unmounts what a non-dev agent left mounted under
// dataDir once it stopped: the tmpfs of its tasks' secrets directories,
// which outlive the agent as its tasks do (client/allocdir). Without it
// the test's temporary directory could not be removed.
func unmountLeftovers(t *testing.T, dataDir string) {
	t.Helper()
	if dataDir == "" {
		return
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Logf("look for leftover mounts: %v", err)
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		// Field 5 is the mount point (a temporary directory's path has
		// nothing mountinfo escapes).
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dataDir+"/") {
			points = append(points, f[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) }) // deepest first
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			t.Errorf("unmount leftover %s: %v", p, err)
		}
	}
}
