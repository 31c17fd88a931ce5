package isolation

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// testParent is the cgroup the tests create their cgroups under.
const testParent = "drover-test-isolation"

// TestMain runs the test binary as the init stage when Start re-executes
// it, and otherwise runs the tests, removes the (empty) test parent cgroup
// and checks for leaked goroutines.
func TestMain(m *testing.M) {
	if code, ok := RunIfInit(os.Args[1:]); ok {
		os.Exit(code)
	}
	if os.Getenv(seccompProbeEnv) != "" {
		os.Exit(seccompProbe()) // seccomp_test.go
	}
	// A -race binary sleeps a second at exit by default; the init stage
	// probe is one that exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	code := m.Run()
	if layout, err := DetectCgroups(); err == nil {
		removeParent(layout, testParent)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// removeParent removes the parent cgroup under every hierarchy, if empty.
func removeParent(layout *CgroupLayout, parent string) {
	if layout.Version == CgroupV2 {
		_ = os.Remove(filepath.Join(layout.Root, parent))
		return
	}
	for _, root := range layout.Controllers {
		_ = os.Remove(filepath.Join(root, parent)) // fails harmlessly if not empty or absent
	}
}
