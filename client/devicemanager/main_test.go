package devicemanager

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// The plugin binaries TestMain builds: devices/fake served as a device
// plugin, and a driver plugin (drivers/mock), for the plugin_dir tests.
var (
	devicePluginBinary string
	driverPluginBinary string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drover-devicemanager-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	devicePluginBinary = filepath.Join(dir, "fakedeviceplugin")
	driverPluginBinary = filepath.Join(dir, "driverplugin")
	for bin, pkg := range map[string]string{
		devicePluginBinary: "../../plugins/testdata/fakedeviceplugin",
		driverPluginBinary: "../drivermanager/testdata/driverplugin",
	} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build the test plugin %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
