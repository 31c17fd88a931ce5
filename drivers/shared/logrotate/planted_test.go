package logrotate

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// logWorld is an alloc dir with its alloc/logs next to a "host" holding
// sentinel files that a task would like the log writer to write into.
type logWorld struct {
	alloc, logs, host string
}

func newLogWorld(t *testing.T) *logWorld {
	t.Helper()
	dir := t.TempDir()
	w := &logWorld{
		alloc: filepath.Join(dir, "alloc-1"),
		logs:  filepath.Join(dir, "alloc-1", "alloc", "logs"),
		host:  filepath.Join(dir, "host"),
	}
	for _, d := range []string{w.logs, filepath.Join(w.host, "rootonly")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(w.host, "rootonly"), 0o700)
	if err := os.WriteFile(filepath.Join(w.host, "passwd"), []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	filepath.WalkDir(w.host, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, past, past)
		}
		return nil
	})
	return w
}

// hostState records every file of the host: mode, size, mtime, content.
func (w *logWorld) hostState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(w.host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		sum := [32]byte{}
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			sum = sha256.Sum256(c)
		}
		fmt.Fprintf(&b, "%s %v %d %v %x\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), sum[:4])
		return nil
	})
	return b.String()
}

// TestPlantedLogFilesAreReplaced plants, where the rotator will write
// (the file it appends to at start, and the files it rotates into), what a
// task could: links to host files and root-only directories, dangling
// links, loops, FIFOs, hard links, directories. The rotator writes every
// byte into its own regular files and the host is unchanged.
func TestPlantedLogFilesAreReplaced(t *testing.T) {
	plants := []struct {
		name  string
		plant func(t *testing.T, w *logWorld, path string)
	}{
		{"link to a host file", func(t *testing.T, w *logWorld, p string) { symlink(t, filepath.Join(w.host, "passwd"), p) }},
		{"link into a root-only dir", func(t *testing.T, w *logWorld, p string) {
			symlink(t, filepath.Join(w.host, "rootonly", "created"), p)
		}},
		{"relative link out", func(t *testing.T, w *logWorld, p string) { symlink(t, "../../../host/passwd", p) }},
		{"link to a dir", func(t *testing.T, w *logWorld, p string) { symlink(t, w.host, p) }},
		{"link loop", func(t *testing.T, w *logWorld, p string) { symlink(t, filepath.Base(p), p) }},
		{"fifo", func(t *testing.T, w *logWorld, p string) {
			if err := syscall.Mkfifo(p, 0o666); err != nil {
				t.Fatal(err)
			}
		}},
		{"hard link to a host file", func(t *testing.T, w *logWorld, p string) {
			if err := os.Link(filepath.Join(w.host, "passwd"), p); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory with a link in it", func(t *testing.T, w *logWorld, p string) {
			if err := os.Mkdir(p, 0o777); err != nil {
				t.Fatal(err)
			}
			symlink(t, w.host, filepath.Join(p, "host"))
		}},
	}
	// at: the indexes planted: 0 is opened at start, 1 and 2 by rotation.
	for _, at := range [][]int{{0}, {1}, {1, 2}} {
		for _, pl := range plants {
			t.Run(fmt.Sprintf("%s at %v", pl.name, at), func(t *testing.T) {
				w := newLogWorld(t)
				for _, n := range at {
					pl.plant(t, w, filepath.Join(w.logs, fmt.Sprintf("web.stdout.%d", n)))
				}
				before := w.hostState(t)
				r, err := NewFileRotatorBeneath(w.alloc, w.logs, "web.stdout", 10, 10)
				if err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				for i := range 3 {
					line := fmt.Sprintf("line %03d\n", i) // 9 bytes: one per file
					want.WriteString(line)
					if _, err := r.Write([]byte(line)); err != nil {
						t.Fatalf("write %d: %v", i, err)
					}
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if after := w.hostState(t); after != before {
					t.Fatalf("the host changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				got, names := contents(t, w.logs, "web.stdout")
				var all strings.Builder
				for _, n := range names {
					all.WriteString(got[n])
				}
				if all.String() != want.String() || len(names) != 3 {
					t.Fatalf("logs %v = %q, want %q in 3 files", names, all.String(), want.String())
				}
				for _, n := range names {
					fi, _ := os.Lstat(filepath.Join(w.logs, n))
					if !fi.Mode().IsRegular() || nlink(fi) != 1 {
						t.Fatalf("%s: %v with %d links", n, fi.Mode(), nlink(fi))
					}
				}
			})
		}
	}
}

// TestLinkedLogDirIsRefused replaces the logs directory, or the alloc/
// directory above it, with a link: the rotator fails and writes nothing.
func TestLinkedLogDirIsRefused(t *testing.T) {
	for _, tc := range []struct{ name, replace, target string }{
		{"logs to the host", "alloc/logs", "host"},
		{"logs to a root-only dir", "alloc/logs", "host/rootonly"},
		{"alloc to the host", "alloc", "host"},
		{"logs inside the alloc", "alloc/logs", "alloc-1/alloc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newLogWorld(t)
			p := filepath.Join(w.alloc, tc.replace)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			symlink(t, filepath.Join(filepath.Dir(w.alloc), tc.target), p)
			before := w.hostState(t)
			r, err := NewFileRotatorBeneath(w.alloc, w.logs, "web.stdout", 10, 10)
			if err == nil {
				r.Write([]byte("pwned\n"))
				r.Close()
				t.Fatal("the rotator opened a linked log dir")
			}
			if !errors.Is(err, beneath.ErrSymlink) {
				t.Errorf("err = %v, want ErrSymlink", err)
			}
			if after := w.hostState(t); after != before {
				t.Fatalf("the host changed:\n%s", after)
			}
		})
	}
	w := newLogWorld(t)
	if _, err := NewFileRotatorBeneath(w.alloc, filepath.Join(w.host, "x"), "web.stdout", 1, 1); err == nil || !strings.Contains(err.Error(), "not beneath") {
		t.Errorf("a dir outside root: %v", err)
	}
	if _, err := NewFileRotatorBeneath(w.alloc, w.logs, "../web.stdout", 1, 1); err == nil {
		t.Error("a base name with a slash was accepted")
	}
}

func TestOpenRefusesWhatIsNotALog(t *testing.T) {
	w := newLogWorld(t)
	symlink(t, filepath.Join(w.host, "passwd"), filepath.Join(w.logs, "web.stdout.0"))
	if err := syscall.Mkfifo(filepath.Join(w.logs, "web.stdout.1"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(w.logs, "web.stdout.2"), []byte("ok\n"), 0o644)
	for n, wantErr := range map[int]bool{0: true, 1: true, 2: false} {
		f, err := Open(filepath.Join(w.logs, fmt.Sprintf("web.stdout.%d", n)))
		if wantErr != (err != nil) || (wantErr && !errors.Is(err, ErrNotLog)) {
			t.Errorf("Open .%d = %v", n, err)
		}
		if f != nil {
			f.Close()
		}
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
