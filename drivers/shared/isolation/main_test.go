package isolation

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the test binary as the init stage when Start re-executes
// it with InitArg, and checks for leaked goroutines otherwise.
func TestMain(m *testing.M) {
	if code, ok := RunIfInit(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A -race binary sleeps a second at exit by default; the init stage
	// probe is one that exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}
