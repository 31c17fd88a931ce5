package beneath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOperationsWork checks what each operation does on plain names.
func TestOperationsWork(t *testing.T) {
	resolvers(t, func(t *testing.T, walk bool) {
		w := newWorld(t)
		r := openRoot(t, w.root, walk)
		old := syscall.Umask(0o077)
		defer syscall.Umask(old)

		// MkdirAll and Mkdir set exactly the mode asked for, whatever
		// the umask, and leave existing directories alone.
		if err := r.MkdirAll("a/b/c", 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"a", "a/b", "a/b/c"} {
			if fi, err := os.Lstat(filepath.Join(w.root, p)); err != nil || fi.Mode() != fs.ModeDir|0o777|os.ModeSticky {
				t.Fatalf("%s: %v %v", p, fi.Mode(), err)
			}
		}
		if err := r.MkdirAll("sub/x", 0o700); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(filepath.Join(w.root, "sub")); fi.Mode().Perm() != 0o755 {
			t.Fatalf("MkdirAll changed an existing dir: %v", fi.Mode())
		}
		if err := r.Mkdir("a/m", 0o751); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(filepath.Join(w.root, "a/m")); fi.Mode().Perm() != 0o751 {
			t.Fatalf("Mkdir mode %v", fi.Mode())
		}
		if err := r.Mkdir("a/m", 0o751); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Mkdir of an existing dir: %v", err)
		}

		// OpenFile creates, appends and reads.
		f, err := r.OpenFile("a/b/log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name() != filepath.Join(w.root, "a/b/log") {
			t.Errorf("Name() = %q", f.Name())
		}
		f.WriteString("hello\n")
		f.Close()
		f, err = r.Open("./a//b/log")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != "hello\n" {
			t.Fatalf("read %q", b)
		}
		if _, err := r.Open("a/missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Open of a missing file: %v", err)
		}

		// Chmod of a file and of a directory.
		if err := r.Chmod("a/b/log", 0o600); err != nil {
			t.Fatal(err)
		}
		if err := r.Chmod("a/b", 0o750); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(filepath.Join(w.root, "a/b/log")); fi.Mode() != 0o600 {
			t.Fatalf("file mode %v", fi.Mode())
		}
		if fi, _ := os.Lstat(filepath.Join(w.root, "a/b")); fi.Mode().Perm() != 0o750 {
			t.Fatalf("dir mode %v", fi.Mode())
		}
		if err := unix.Mkfifo(filepath.Join(w.root, "fifo"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := r.Chmod("fifo", 0o666); !errors.Is(err, ErrNotRegular) {
			t.Fatalf("Chmod of a FIFO: %v", err)
		}
		// Opening a FIFO for reading does not block.
		if f, err := r.Open("fifo"); err != nil {
			t.Fatalf("Open of a FIFO: %v", err)
		} else {
			f.Close()
		}

		// Lstat, ReadDir, Readlink and Symlink.
		fi, err := r.Lstat("a/b/log")
		if err != nil || fi.Name() != "log" || fi.Size() != 6 || !fi.Mode().IsRegular() {
			t.Fatalf("Lstat = %v, %v", fi, err)
		}
		if fi, err := r.Lstat(""); err != nil || !fi.IsDir() {
			t.Fatalf("Lstat of the root: %v %v", fi, err)
		}
		if err := r.Symlink("../../outside", "a/b/ln"); err != nil {
			t.Fatal(err)
		}
		if got, err := r.Readlink("a/b/ln"); err != nil || got != "../../outside" {
			t.Fatalf("Readlink = %q, %v", got, err)
		}
		infos, err := r.ReadDir("a/b")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, fi := range infos {
			names = append(names, fmt.Sprintf("%s:%v", fi.Name(), fi.Mode()))
		}
		if got := strings.Join(names, " "); got != "c:dtrwxrwxrwx ln:Lrwxrwxrwx log:-rw-------" {
			t.Fatalf("ReadDir = %s", got)
		}

		// Rename and Remove.
		if err := r.Rename("a/b/log", "sub/log"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(w.root, "sub/log")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"sub/log", "a/b/ln", "a/b/c"} {
			if err := r.Remove(p); err != nil {
				t.Fatalf("Remove %s: %v", p, err)
			}
		}
		if err := r.Remove("a"); !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
			t.Fatalf("Remove of a non-empty dir: %v", err)
		}

		// OpenRoot: a sub-root resolves beneath itself.
		sub, err := r.OpenRoot("a")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if sub.Name() != filepath.Join(w.root, "a") {
			t.Errorf("sub root name %q", sub.Name())
		}
		if err := sub.MkdirAll("n", 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(w.root, "a/n")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestChown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	resolvers(t, func(t *testing.T, walk bool) {
		w := newWorld(t)
		r := openRoot(t, w.root, walk)
		for _, p := range []string{"sub", "file"} {
			if err := r.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Lstat(filepath.Join(w.root, p))
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
				t.Fatalf("%s owned by %d:%d", p, st.Uid, st.Gid)
			}
		}
	})
}

// TestRemoveAllBigDirectory removes a directory with more entries than
// one batch.
func TestRemoveAllBigDirectory(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range removeBatch*2 + 7 {
		if err := os.WriteFile(filepath.Join(big, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := openRoot(t, dir, false)
	if err := r.RemoveAll("big"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(big); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("still there: %v", err)
	}
}

// TestRemoveAllStopsAtMountPoints mounts a tmpfs (and binds a host
// directory) under the root: RemoveAll removes nothing below either.
func TestRemoveAllStopsAtMountPoints(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	resolvers(t, func(t *testing.T, walk bool) {
		w := newWorld(t)
		tmpfs := filepath.Join(w.root, "sub", "tmpfs")
		bind := filepath.Join(w.root, "bind")
		for _, d := range []string{tmpfs, bind} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := unix.Mount("tmpfs", tmpfs, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("cannot mount a tmpfs here: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(tmpfs, unix.MNT_DETACH) })
		if err := os.WriteFile(filepath.Join(tmpfs, "keep"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(w.host, bind, "", unix.MS_BIND, ""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Unmount(bind, unix.MNT_DETACH) })
		host := snapshot(t, w.host)

		r := openRoot(t, w.dir, walk)
		err := r.RemoveAll("root")
		if !errors.Is(err, ErrMountPoint) {
			t.Fatalf("RemoveAll = %v, want ErrMountPoint", err)
		}
		if _, err := os.Stat(filepath.Join(tmpfs, "keep")); err != nil {
			t.Fatalf("a file of the tmpfs was removed: %v", err)
		}
		if !walk {
			// A bind mount of the same file system is seen by openat2
			// only.
			if d := diff(host, snapshot(t, w.host)); d != "" {
				t.Fatalf("the host changed through a bind mount:\n%s", d)
			}
		}
	})
}

// TestSwappedDirectoryRace swaps a directory with a link to the host
// while names through it are opened, created and chmod-ed: whatever
// interleaving happens, the host is unchanged.
func TestSwappedDirectoryRace(t *testing.T) {
	resolvers(t, func(t *testing.T, walk bool) {
		w := newWorld(t)
		r := openRoot(t, w.root, walk)
		host := snapshot(t, w.host)
		flip := filepath.Join(w.root, "flip")
		real := filepath.Join(w.root, "real")
		if err := os.Mkdir(real, 0o755); err != nil {
			t.Fatal(err)
		}
		const rounds = 2000
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			tmp := filepath.Join(w.root, "tmp-link")
			for i := range rounds {
				// Atomically point "flip" at the host, then at the real dir.
				target := w.host
				if i%2 == 1 {
					os.Remove(flip)
					os.Rename(real, flip)
					continue
				}
				os.Rename(flip, real)
				os.Symlink(target, tmp)
				os.Rename(tmp, flip)
			}
		}()
		for i := range rounds {
			if f, err := r.OpenFile("flip/secret.txt", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				f.WriteString("pwned")
				f.Close()
			}
			r.MkdirAll(fmt.Sprintf("flip/d%d", i%3), 0o777)
			r.Chmod("flip/rootonly", 0o777)
			r.Chmod("flip", 0o777|os.ModeSticky)
		}
		wg.Wait()
		if d := diff(host, snapshot(t, w.host)); d != "" {
			t.Fatalf("the host changed:\n%s", d)
		}
	})
}

// TestOpenat2IsUsed checks that this kernel has openat2, so that the fast
// path is the one the other tests cover as "openat2".
func TestOpenat2IsUsed(t *testing.T) {
	w := newWorld(t)
	r := openRoot(t, w.root, false)
	if _, err := r.Open("file"); err != nil {
		t.Fatal(err)
	}
	if r.walk.Load() {
		t.Skip("this kernel has no openat2: only the walk is covered")
	}
}

func TestBadRoot(t *testing.T) {
	if _, err := OpenRoot(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenRoot of a missing dir: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := OpenRoot(f); !errors.Is(err, unix.ENOTDIR) {
		t.Fatalf("OpenRoot of a file: %v", err)
	}
}
