package allocdir

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestBuildLayoutAndDestroy(t *testing.T) {
	root := t.TempDir()
	d := New(root, "a1")
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	td := d.NewTaskDir("web")
	if err := td.Build(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"a1/alloc/logs", "a1/alloc/tmp", "a1/alloc/data",
		"a1/web/local", "a1/web/secrets", "a1/web/tmp",
	} {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil || !fi.IsDir() {
			t.Errorf("%s: not a directory: %v", p, err)
		}
	}
	for p, want := range map[string]os.FileMode{
		"a1":             os.ModeDir | 0o755,
		"a1/alloc":       os.ModeDir | os.ModeSticky | 0o777,
		"a1/alloc/logs":  os.ModeDir | 0o755, // tasks cannot plant anything for the shims
		"a1/alloc/tmp":   os.ModeDir | os.ModeSticky | 0o777,
		"a1/alloc/data":  os.ModeDir | os.ModeSticky | 0o777,
		"a1/web":         os.ModeDir | 0o755,
		"a1/web/local":   os.ModeDir | os.ModeSticky | 0o777,
		"a1/web/tmp":     os.ModeDir | os.ModeSticky | 0o777,
		"a1/web/secrets": os.ModeDir | 0o700,
	} {
		if fi, err := os.Lstat(filepath.Join(root, p)); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode(), err, want)
		}
	}
	// A rebuild (an upgrade from a world-writable logs dir, say) resets
	// the modes.
	if err := os.Chmod(d.LogDir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(d.LogDir); fi.Mode().Perm() != 0o755 || fi.Mode()&os.ModeSticky != 0 {
		t.Errorf("logs mode after a rebuild: %v", fi.Mode())
	}
	out, errp := d.LogPaths("web")
	if out != filepath.Join(root, "a1/alloc/logs/web.stdout.0") || errp != filepath.Join(root, "a1/alloc/logs/web.stderr.0") {
		t.Errorf("LogPaths = %s, %s", out, errp)
	}
	if d.NewTaskDir("web") != td {
		t.Errorf("NewTaskDir twice returned different dirs")
	}
	if err := d.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.AllocDir); !os.IsNotExist(err) {
		t.Errorf("alloc dir still exists: %v", err)
	}
	if err := td.Build(); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Build after Destroy: %v", err)
	}
	if err := d.Destroy(); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	d := New(t.TempDir(), "a1")
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.NewTaskDir(name).Build(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = d.Built() }()
	wg.Wait()
}
