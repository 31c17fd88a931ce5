package api

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine (a log stream's reader,
// say) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
