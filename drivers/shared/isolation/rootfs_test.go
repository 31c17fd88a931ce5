package isolation

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// TestMountPointsRefusePlantedLinks builds mount points in a task's root
// where the task planted links (to the host, to a root-only directory,
// loops, relative climbs): each is refused and nothing outside the root is
// created or changed. Plain mount points are created.
func TestMountPointsRefusePlantedLinks(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	if err := os.MkdirAll(filepath.Join(host, "rootonly"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(host, "file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "task")
	if err := os.MkdirAll(filepath.Join(root, "usr"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"bin":      filepath.Join(host, "rootonly"),
		"etc":      "../host",
		"lib":      "lib",
		"usr/lib":  "../../host",
		"resolv":   filepath.Join(host, "file"),
		"inside":   "usr",
		"dangling": filepath.Join(host, "new"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	state := func() string {
		var b strings.Builder
		filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				fi, _ := d.Info()
				fmt.Fprintf(&b, "%s %v %d %v\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			}
			return nil
		})
		return b.String()
	}
	before := state()
	for _, tc := range []struct {
		target string
		dir    bool
	}{
		{"/bin", true}, {"/bin/sh", false}, {"/etc/ssl", true}, {"/etc/resolv.conf", false},
		{"/lib", true}, {"/usr/lib/x", true}, {"/resolv", false}, {"/inside/x", true},
		{"/dangling", false}, {"/dangling", true},
	} {
		if _, err := mountPoint(root, tc.target, tc.dir); !errors.Is(err, beneath.ErrSymlink) {
			t.Errorf("mountPoint(%s, dir=%v) = %v, want ErrSymlink", tc.target, tc.dir, err)
		}
	}
	if after := state(); after != before {
		t.Fatalf("the host changed:\n%s", after)
	}
	for _, tc := range []struct {
		target string
		dir    bool
	}{{"/alloc", true}, {"/dev/null", false}, {"/usr/share/x", true}, {"/../../proc", true}} {
		p, err := mountPoint(root, tc.target, tc.dir)
		if err != nil {
			t.Fatalf("mountPoint(%s): %v", tc.target, err)
		}
		if !strings.HasPrefix(p, root+"/") {
			t.Fatalf("mountPoint(%s) = %s, outside the root", tc.target, p)
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.IsDir() != tc.dir {
			t.Fatalf("%s: %v %v", p, fi, err)
		}
	}
	// An existing file mount point is kept.
	if _, err := mountPoint(root, "/dev/null", false); err != nil {
		t.Fatalf("existing file mount point: %v", err)
	}
}
