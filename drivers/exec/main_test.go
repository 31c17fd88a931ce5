package exec

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/drivers/shared/isolation"
)

// TestMain runs the test binary as the isolation init stage when the
// driver re-executes it, and checks for leaked goroutines otherwise.
func TestMain(m *testing.M) {
	if code, ok := isolation.RunIfInit(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A -race binary sleeps a second at exit by default; the init stage
	// probe is one that exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}
