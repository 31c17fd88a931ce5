package beneath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// attackNames are names a task could make the agent use: through each of
// the world's planted links, and names that are not plain relative paths.
var attackNames = []struct {
	name string
	// final: the name itself is a link (ops that do not follow it may
	// succeed on the link); otherwise a link or a bad name is on the way.
	final bool
	bad   bool
}{
	{name: "link-dir", final: true},
	{name: "link-dir/secret.txt"},
	{name: "link-dir/rootonly/file"},
	{name: "link-abs", final: true},
	{name: "link-abs/secret.txt"},
	{name: "link-abs/new-dir/new-file"},
	{name: "link-file", final: true},
	{name: "link-rootonly", final: true},
	{name: "link-rootonly/new"},
	{name: "dangling", final: true},
	{name: "loop", final: true},
	{name: "loop/x"},
	{name: "loop1", final: true},
	{name: "loop1/x"},
	{name: "inside", final: true},
	{name: "inside/file"},
	{name: "sub/up", final: true},
	{name: "sub/up/secret.txt"},
	{name: "sub/up/rootonly/file"},
	{name: "../host/secret.txt", bad: true},
	{name: "..", bad: true},
	{name: "sub/../../host/secret.txt", bad: true},
	{name: "sub/../file", bad: true},
	{name: "/etc/passwd", bad: true},
	{name: "file\x00x", bad: true},
}

// ops are the Root's operations as a task's name would reach them.
// follows: the operation would act on what a link points to, so it must
// fail on every attack name; otherwise it may act on a final link itself.
var ops = []struct {
	name    string
	follows bool
	do      func(r *Root, name string) error
}{
	{"append", true, func(r *Root, name string) error {
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("pwned")
		return err
	}},
	{"truncate", true, func(r *Root, name string) error {
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			f.Close()
		}
		return err
	}},
	{"create-excl", true, func(r *Root, name string) error {
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
		}
		return err
	}},
	{"read", true, func(r *Root, name string) error {
		f, err := r.Open(name)
		if err == nil {
			f.Close()
		}
		return err
	}},
	{"mkdir", true, func(r *Root, name string) error { return r.Mkdir(name+"/d", 0o777) }},
	{"mkdirall", true, func(r *Root, name string) error { return r.MkdirAll(name+"/d/e", 0o777|os.ModeSticky) }},
	{"chmod", true, func(r *Root, name string) error { return r.Chmod(name, 0o777|os.ModeSticky) }},
	{"chown", true, func(r *Root, name string) error { return r.Chown(name, 65534, 65534) }},
	{"readdir", true, func(r *Root, name string) error { _, err := r.ReadDir(name); return err }},
	{"openroot", true, func(r *Root, name string) error {
		sub, err := r.OpenRoot(name)
		if err != nil {
			return err
		}
		defer sub.Close()
		f, err := sub.OpenFile("planted", os.O_WRONLY|os.O_CREATE, 0o644)
		if err == nil {
			f.Close()
		}
		return err
	}},
	{"rename-from", true, func(r *Root, name string) error {
		// Renaming a link itself is fine; go through it instead.
		return r.Rename(name+"/x", "stolen")
	}},
	{"rename-to", true, func(r *Root, name string) error { return r.Rename("file", name+"/x") }},
	{"symlink-in", true, func(r *Root, name string) error { return r.Symlink("/", name+"/x") }},
	{"lstat", false, func(r *Root, name string) error { _, err := r.Lstat(name); return err }},
	{"readlink", false, func(r *Root, name string) error { _, err := r.Readlink(name); return err }},
	{"remove", false, func(r *Root, name string) error { return r.Remove(name) }},
	{"removeall", false, func(r *Root, name string) error { return r.RemoveAll(name) }},
}

// TestNothingOutsideTheRootChanges runs every operation on every attack
// name, with both resolvers, and checks that the host is unchanged: not a
// file created, written, truncated, chmod-ed, chown-ed or removed. An
// operation that would follow a link must fail with ErrSymlink (or
// ErrBadName) and change nothing at all, so those share one world per
// name; the others get a fresh one each.
func TestNothingOutsideTheRootChanges(t *testing.T) {
	resolvers(t, func(t *testing.T, walk bool) {
		for _, a := range attackNames {
			t.Run(strings.ReplaceAll(a.name, "\x00", "NUL"), func(t *testing.T) {
				shared := newWorld(t)
				for _, op := range ops {
					t.Run(op.name, func(t *testing.T) {
						w := shared
						if !op.follows {
							w = newWorld(t)
						}
						before := snapshot(t, w.dir)
						hostBefore := snapshot(t, w.host)
						r := openRoot(t, w.root, walk)
						err := op.do(r, a.name)
						if d := diff(hostBefore, snapshot(t, w.host)); d != "" {
							t.Fatalf("the host changed (err %v):\n%s", err, d)
						}
						switch {
						case a.bad:
							if !errors.Is(err, ErrBadName) {
								t.Fatalf("err = %v, want ErrBadName", err)
							}
						case op.follows || !a.final:
							if err == nil {
								t.Fatal("no error: the operation went through a link")
							}
							if !errors.Is(err, ErrSymlink) && !(op.name == "create-excl" && errors.Is(err, os.ErrExist)) {
								t.Fatalf("err = %v, want ErrSymlink", err)
							}
						default:
							return // acting on the link itself is allowed
						}
						if d := diff(before, snapshot(t, w.dir)); d != "" {
							t.Fatalf("a refused operation changed the world:\n%s", d)
						}
					})
				}
			})
		}
	})
}

// TestRemoveAllRemovesLinksNotTargets removes a tree full of links to the
// host: the links go, the host stays.
func TestRemoveAllRemovesLinksNotTargets(t *testing.T) {
	resolvers(t, func(t *testing.T, walk bool) {
		w := newWorld(t)
		if err := os.MkdirAll(filepath.Join(w.root, "sub", "deep", "er"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(w.host, filepath.Join(w.root, "sub", "deep", "er", "host")); err != nil {
			t.Fatal(err)
		}
		host := snapshot(t, w.host)
		parent := openRoot(t, w.dir, walk)
		if err := parent.RemoveAll("root"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(w.root); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("root still there: %v", err)
		}
		if d := diff(host, snapshot(t, w.host)); d != "" {
			t.Fatalf("the host changed:\n%s", d)
		}
		if err := parent.RemoveAll("root"); err != nil {
			t.Fatalf("second RemoveAll: %v", err)
		}
		if err := parent.RemoveAll(""); !errors.Is(err, ErrBadName) {
			t.Fatalf("RemoveAll of the root itself: %v", err)
		}
	})
}
