package builtintest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/exec"
	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/conformance"
)

func TestConformance_Exec(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the exec driver needs root")
	}
	if _, err := isolation.DetectCgroups(); err != nil {
		t.Skipf("no usable cgroups: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunConformance(t, func(t *testing.T) drivers.DriverPlugin {
		return exec.New(nil,
			exec.WithOptions(exec.Options{CgroupParent: "drover-conformance"}),
			exec.WithInitCommand(exe, []string{isolation.InitArg}))
	}, &conformance.Spec{
		RunForever:      json.RawMessage(`{"command":"/bin/sleep","args":["1000"]}`),
		ExitZero:        json.RawMessage(`{"command":"/bin/true"}`),
		ExitThree:       json.RawMessage(`{"command":"/bin/sh","args":["-c","exit 3"]}`),
		ExecCommand:     []string{"/bin/true"},
		ExecEchoCommand: []string{"/bin/cat"},
		// sleep, as PID 1 of its namespace, ignores SIGINT: it is killed.
		StopTimeout: time.Second,
		// The task's chroot needs the permissions the client's allocdir
		// gives its directories.
		Adjust: func(cfg *drivers.TaskConfig) {
			for _, d := range []struct {
				path string
				perm os.FileMode
			}{
				{cfg.TaskDir.LocalDir, 0o777 | os.ModeSticky},
				{filepath.Join(cfg.TaskDir.Dir, "tmp"), 0o777 | os.ModeSticky},
				{cfg.TaskDir.SecretsDir, 0o700},
				{cfg.TaskDir.SharedDir, 0o777 | os.ModeSticky},
			} {
				if err := os.MkdirAll(d.path, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(d.path, d.perm); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
}
