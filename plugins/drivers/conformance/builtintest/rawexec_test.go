// Package builtintest runs the conformance harness against drover's
// built-in drivers that need no privileges (raw_exec), in process and as an
// external plugin would be used. It holds only tests.
package builtintest_test

import (
	"encoding/json"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/drivers/rawexec"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/conformance"
)

func TestMain(m *testing.M) {
	// raw_exec starts its shims as "<test binary> shim ...".
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A -race binary sleeps a second at exit by default; shims exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}

func TestConformance_RawExec(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunConformance(t, func(t *testing.T) drivers.DriverPlugin {
		return rawexec.New(nil, rawexec.WithShimCommand(exe, []string{shim.Subcommand}))
	}, &conformance.Spec{
		RunForever:  json.RawMessage(`{"command":"sleep","args":["1000"]}`),
		ExitZero:    json.RawMessage(`{"command":"true"}`),
		ExitThree:   json.RawMessage(`{"command":"sh","args":["-c","exit 3"]}`),
		ExecCommand: []string{"true"},
	})
}
