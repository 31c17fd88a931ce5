package allocwatcher

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// hostDir makes a directory standing for the host next to the alloc root:
// secret.txt and a root-only directory, and returns it with a function
// describing its state (to compare before and after).
func hostDir(t *testing.T) (string, func() string) {
	t.Helper()
	host := filepath.Join(t.TempDir(), "host")
	if err := os.MkdirAll(filepath.Join(host, "rootonly"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(host, "secret.txt"), "s3cret")
	state := func() string {
		var b strings.Builder
		filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := d.Info()
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "%s %v %d %v %q\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), c)
			return nil
		})
		return b.String()
	}
	return host, state
}

// TestSnapshotCarriesLinksNotTargets: a snapshot of an alloc dir full of
// links to the host holds the links, never the host's content; a data or
// local directory replaced by a link is left out.
func TestSnapshotCarriesLinksNotTargets(t *testing.T) {
	host, _ := hostDir(t)
	root := t.TempDir()
	src := buildDir(t, root, "src", "web", "api")
	writeFile(t, filepath.Join(src.SharedDir, "data", "ok"), "fine")
	for link, target := range map[string]string{
		"alloc/data/secret": filepath.Join(host, "secret.txt"),
		"alloc/data/dir":    host,
		"web/local/rel":     "../../../../host/secret.txt",
	} {
		if err := os.Symlink(target, filepath.Join(src.AllocDir, link)); err != nil {
			t.Fatal(err)
		}
	}
	// The api task replaced its local dir by a link to the host.
	if err := os.RemoveAll(filepath.Join(src.AllocDir, "api", "local")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(src.AllocDir, "api", "local")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, src, []string{"web", "api"}); err != nil {
		t.Fatal(err)
	}
	names, contents := readTar(t, buf.Bytes())
	if bytes.Contains(contents, []byte("s3cret")) {
		t.Fatal("the snapshot carries a host file's content")
	}
	for _, n := range names {
		if strings.HasPrefix(n, "api/") {
			t.Errorf("the linked local dir was archived: %s", n)
		}
	}
	if !strings.Contains(strings.Join(names, " "), "alloc/data/ok") {
		t.Errorf("the data is missing: %v", names)
	}
}

// TestUnpackIntoPlantedLinks unpacks a valid snapshot into an alloc dir
// where links replace the directories it writes: it fails, and the host
// is unchanged.
func TestUnpackIntoPlantedLinks(t *testing.T) {
	snap := makeTar(t, []entry{
		{name: "alloc/data/", typ: '5'},
		{name: "alloc/data/f", typ: '0', body: "pwned"},
		{name: "web/local/", typ: '5'},
		{name: "web/local/secret.txt", typ: '0', body: "pwned"},
	})
	for _, replace := range []string{"alloc/data", "alloc", "web", "web/local"} {
		t.Run(replace, func(t *testing.T) {
			host, state := hostDir(t)
			dest := buildDir(t, t.TempDir(), "dest", "web")
			p := filepath.Join(dest.AllocDir, replace)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(host, p); err != nil {
				t.Fatal(err)
			}
			before := state()
			err := Unpack(bytes.NewReader(snap), dest.AllocDir, UnpackLimits{MaxBytes: 1 << 20, Tasks: []string{"web"}})
			if !errors.Is(err, ErrUnsafeSnapshot) {
				t.Errorf("Unpack = %v, want ErrUnsafeSnapshot", err)
			}
			if after := state(); after != before {
				t.Fatalf("the host changed:\n%s", after)
			}
		})
	}
}

// TestMoveAllocDataRefusesLinks moves alloc data where a task replaced the
// old or the new alloc's directories by links: nothing is moved, copied
// or removed outside the allocs.
func TestMoveAllocDataRefusesLinks(t *testing.T) {
	for _, tc := range []struct{ name, alloc, replace string }{
		{"old data", "old", "alloc/data"},
		{"old local", "old", "web/local"},
		{"old alloc", "old", "alloc"},
		{"new alloc", "new", "alloc"},
		{"new task dir", "new", "web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, state := hostDir(t)
			root := t.TempDir()
			old := buildDir(t, root, "old", "web")
			writeFile(t, filepath.Join(old.SharedDir, "data", "a"), "old")
			writeFile(t, filepath.Join(old.AllocDir, "web", "local", "b"), "old")
			dest := buildDir(t, root, "new")
			if err := os.MkdirAll(filepath.Join(dest.AllocDir, "web"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, tc.alloc, tc.replace)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(host, p); err != nil {
				t.Fatal(err)
			}
			before := state()
			if err := MoveAllocData(old, dest, []string{"web"}); err == nil {
				t.Error("the move went through a link")
			}
			if after := state(); after != before {
				t.Fatalf("the host changed:\n%s", after)
			}
		})
	}
}

// TestCopyTreeCopiesLinksAsLinks covers the copy used across file
// systems: links are copied, not followed; the host's content is not read.
func TestCopyTreeCopiesLinksAsLinks(t *testing.T) {
	host, state := hostDir(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "from", "sub", "f"), "data")
	if err := os.Symlink(filepath.Join(host, "secret.txt"), filepath.Join(root, "from", "sub", "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(root, "from", "d")); err != nil {
		t.Fatal(err)
	}
	r, err := beneath.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before := state()
	if err := copyTree(r, "from", "to"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(root, "to", "sub", "f")); got != "data" {
		t.Errorf("f = %q", got)
	}
	for _, l := range []string{"to/sub/l", "to/d"} {
		if fi, err := os.Lstat(filepath.Join(root, l)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is not a link: %v", l, err)
		}
	}
	if after := state(); after != before {
		t.Fatalf("the host changed:\n%s", after)
	}
	// A link in place of the destination is refused.
	if err := os.Symlink(host, filepath.Join(root, "to2")); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(r, "from", "to2/x"); !errors.Is(err, beneath.ErrSymlink) {
		t.Errorf("copy into a link: %v", err)
	}
	if after := state(); after != before {
		t.Fatalf("the host changed:\n%s", after)
	}
}

// readTar returns the entry names of a tar.gz and all its files' bytes.
func readTar(t *testing.T, b []byte) ([]string, []byte) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	var all bytes.Buffer
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, all.Bytes()
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		all.ReadFrom(tr)
	}
}
