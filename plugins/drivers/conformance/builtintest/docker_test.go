package builtintest_test

import (
	"context"
	"encoding/json"
	osexec "os/exec"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/docker"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/conformance"
)

// dockerTestImage is built locally by .ci/docker.sh (no registry).
const dockerTestImage = "drover-test/busybox:latest"

// needDocker skips unless a daemon answers and has the test image.
func needDocker(t *testing.T) {
	t.Helper()
	d, err := docker.New(nil, nil)
	if err != nil {
		t.Skipf("docker driver: %v", err)
	}
	defer d.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := d.Fingerprint(ctx)
	if err != nil {
		t.Skipf("docker fingerprint: %v", err)
	}
	if fp, ok := <-ch; !ok || fp.Health != drivers.HealthStateHealthy {
		t.Skipf("docker daemon not healthy (run .ci/docker.sh): %+v", fp)
	}
	cancel()
	for range ch {
	}
	if err := osexec.Command("docker", "image", "inspect", dockerTestImage).Run(); err != nil {
		t.Skipf("test image %s missing (run .ci/docker.sh): %v", dockerTestImage, err)
	}
}

func TestConformance_Docker(t *testing.T) {
	needDocker(t)
	task := func(cmd string, args ...string) json.RawMessage {
		b, err := json.Marshal(map[string]any{"image": dockerTestImage, "command": cmd, "args": args})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	conformance.RunConformance(t, func(t *testing.T) drivers.DriverPlugin {
		d, err := docker.New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Shutdown)
		return d
	}, &conformance.Spec{
		RunForever:      task("sleep", "1000"),
		ExitZero:        task("true"),
		ExitThree:       task("sh", "-c", "exit 3"),
		ExecCommand:     []string{"true"},
		ExecEchoCommand: []string{"cat"},
		// sleep, as PID 1 of its container, ignores SIGINT: it is killed.
		StopTimeout: time.Second,
	})
}
