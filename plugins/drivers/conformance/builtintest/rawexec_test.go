// Package builtintest runs the conformance harness against drover's
// built-in drivers in process: raw_exec always, exec when run as root with
// cgroups, docker when a daemon with the test image answers (.ci/docker.sh).
// It holds only tests. (The mock driver's runs, in process and as an
// external plugin, are in plugins/drivers/conformance and plugins.)
package builtintest_test

import (
	"encoding/json"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/drivers/rawexec"
	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/conformance"
)

func TestMain(m *testing.M) {
	// raw_exec starts its shims as "<test binary> shim ...".
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	// exec runs its isolation init stage as "<test binary> <InitArg> ...".
	if len(os.Args) > 1 && os.Args[1] == isolation.InitArg {
		os.Exit(isolation.InitMain(os.Args[2:]))
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
		RunForever:      json.RawMessage(`{"command":"sleep","args":["1000"]}`),
		ExitZero:        json.RawMessage(`{"command":"true"}`),
		ExitThree:       json.RawMessage(`{"command":"sh","args":["-c","exit 3"]}`),
		ExecCommand:     []string{"true"},
		ExecEchoCommand: []string{"cat"},
	})
}
