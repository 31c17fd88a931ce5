package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
)

// testCgroupParent is the cgroup the tests' tasks run under.
const testCgroupParent = "drover-test-exec"

// TestMain runs the test binary as the task shim or the isolation init
// stage when the driver (or the shim) re-executes it, and otherwise runs the tests, removes the (empty)
// test parent cgroup and checks for leaked goroutines.
func TestMain(m *testing.M) {
	if code, ok := isolation.RunIfInit(os.Args[1:]); ok {
		os.Exit(code)
	}
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A -race binary sleeps a second at exit by default; the init stage
	// probe is one that exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	code := m.Run()
	if layout, err := isolation.DetectCgroups(); err == nil {
		dirs := []string{filepath.Join(layout.Root, testCgroupParent)}
		if layout.Version == isolation.CgroupV1 {
			dirs = dirs[:0]
			for _, root := range layout.Controllers {
				dirs = append(dirs, filepath.Join(root, testCgroupParent))
			}
		}
		for _, d := range dirs {
			_ = os.Remove(d) // fails harmlessly if not empty or absent
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
