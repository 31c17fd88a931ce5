package beneath

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// world is a temporary directory holding a "host" with sentinel files and
// a root (the allocation) in which a task planted links to the host.
type world struct {
	dir  string // the temporary directory
	root string // dir/root: what the Root opens
	host string // dir/host: outside the root
}

// newWorld builds:
//
//	host/secret.txt            0600 "secret"
//	host/rootonly/             0700
//	host/rootonly/file         0600 "root only"
//	root/file                  "data"
//	root/sub/                  a plain directory
//	root/link-dir     -> ../host            (relative, escaping)
//	root/link-abs     -> <dir>/host         (absolute)
//	root/link-file    -> <dir>/host/secret.txt
//	root/link-rootonly-> <dir>/host/rootonly
//	root/dangling     -> <dir>/host/created (does not exist)
//	root/loop         -> loop
//	root/loop1 -> loop2, root/loop2 -> loop1
//	root/inside       -> sub                (stays inside: refused too)
//	root/sub/up       -> ../../host
func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{dir: dir, root: filepath.Join(dir, "root"), host: filepath.Join(dir, "host")}
	mk := func(p string, perm os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, data string, perm os.FileMode) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mk(w.host, 0o755)
	mk(filepath.Join(w.host, "rootonly"), 0o700)
	write(filepath.Join(w.host, "secret.txt"), "secret", 0o600)
	write(filepath.Join(w.host, "rootonly", "file"), "root only", 0o600)
	mk(filepath.Join(w.root, "sub"), 0o755)
	write(filepath.Join(w.root, "file"), "data", 0o644)
	link("../host", filepath.Join(w.root, "link-dir"))
	link(w.host, filepath.Join(w.root, "link-abs"))
	link(filepath.Join(w.host, "secret.txt"), filepath.Join(w.root, "link-file"))
	link(filepath.Join(w.host, "rootonly"), filepath.Join(w.root, "link-rootonly"))
	link(filepath.Join(w.host, "created"), filepath.Join(w.root, "dangling"))
	link("loop", filepath.Join(w.root, "loop"))
	link("loop2", filepath.Join(w.root, "loop1"))
	link("loop1", filepath.Join(w.root, "loop2"))
	link("sub", filepath.Join(w.root, "inside"))
	link("../../host", filepath.Join(w.root, "sub", "up"))
	// Let the modification times of what follows differ from these.
	past := time.Now().Add(-time.Hour)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			os.Chtimes(p, past, past)
		}
		return nil
	})
	return w
}

// entry is what a snapshot records of one file.
type entry struct {
	mode     fs.FileMode
	uid, gid uint32
	size     int64
	mtime    time.Time
	sum      [32]byte // of a regular file's content
	link     string
}

// snapshot records every file under dir (links not followed).
func snapshot(t *testing.T, dir string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		e := entry{mode: fi.Mode(), uid: st.Uid, gid: st.Gid, size: fi.Size(), mtime: fi.ModTime()}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.sum = sha256.Sum256(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diff describes how two snapshots differ; "" when they do not.
func diff(before, after map[string]entry) string {
	var b bytes.Buffer
	var keys []string
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		x, okx := before[k]
		y, oky := after[k]
		switch {
		case !okx:
			fmt.Fprintf(&b, "created %s (%v)\n", k, y.mode)
		case !oky:
			fmt.Fprintf(&b, "removed %s\n", k)
		case x != y:
			fmt.Fprintf(&b, "changed %s: %+v -> %+v\n", k, x, y)
		}
	}
	return strings.TrimSpace(b.String())
}

// openRoot opens dir as a Root resolving with openat2, or with the walk.
func openRoot(t *testing.T, dir string, walk bool) *Root {
	t.Helper()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.walk.Store(walk)
	t.Cleanup(func() { r.Close() })
	return r
}

// resolvers runs f once per way of resolving names.
func resolvers(t *testing.T, f func(t *testing.T, walk bool)) {
	for _, walk := range []bool{false, true} {
		name := "openat2"
		if walk {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) { f(t, walk) })
	}
}
