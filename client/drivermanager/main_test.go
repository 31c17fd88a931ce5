package drivermanager

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// pluginBinary is the test driver plugin TestMain builds; deviceBinary is
// a device plugin (devices/fake), which the driver manager must skip.
var pluginBinary, deviceBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drover-drivermanager-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBinary = filepath.Join(dir, "driverplugin")
	if out, err := exec.Command("go", "build", "-o", pluginBinary, "./testdata/driverplugin").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the test plugin: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	deviceBinary = filepath.Join(dir, "fakedeviceplugin")
	if out, err := exec.Command("go", "build", "-o", deviceBinary, "../../plugins/testdata/fakedeviceplugin").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the test device plugin: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
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

// pluginDir returns a new plugin_dir holding the test plugin under each of
// names (symlinks: the binary picks its driver by the name it runs as).
func pluginDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		if err := os.Symlink(pluginBinary, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
