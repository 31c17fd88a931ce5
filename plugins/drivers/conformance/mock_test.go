package conformance_test

import (
	"encoding/json"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/conformance"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mockSpec is the conformance spec of the mock driver.
var mockSpec = &conformance.Spec{
	RunForever: json.RawMessage(`{"run_for":"1h"}`),
	ExitZero:   json.RawMessage(`{"run_for":"10ms"}`),
	ExitThree:  json.RawMessage(`{"run_for":"10ms","exit_code":3}`),
	// The mock's exec_command is part of the task config; without one
	// ExecTask returns an empty successful result.
	ExecCommand:     []string{"true"},
	ExecEchoCommand: []string{"cat"},
}

func TestConformance_Mock(t *testing.T) {
	conformance.RunConformance(t, func(t *testing.T) drivers.DriverPlugin {
		d := mock.New(nil)
		t.Cleanup(d.Shutdown)
		return d
	}, mockSpec)
}
