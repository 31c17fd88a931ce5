package allocdir

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

// host is a temporary directory standing for the host: a client alloc
// root ("allocs") next to sentinel files a task must never reach.
type host struct {
	dir    string // the temporary directory
	allocs string // dir/allocs: the client's alloc root
	// outside: dir/host, with secret.txt (0600) and rootonly/ (0700)
	outside string
}

func newHost(t *testing.T) *host {
	t.Helper()
	dir := t.TempDir()
	h := &host{dir: dir, allocs: filepath.Join(dir, "allocs"), outside: filepath.Join(dir, "host")}
	for _, d := range []string{h.allocs, filepath.Join(h.outside, "rootonly")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(h.outside, "rootonly"), 0o700); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{"secret.txt": "secret", "rootonly/file": "root only"} {
		if err := os.WriteFile(filepath.Join(h.outside, p), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	filepath.WalkDir(h.outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, past, past)
		}
		return nil
	})
	return h
}

// entry is what a snapshot records of one file.
type entry struct {
	mode     fs.FileMode
	uid, gid uint32
	size     int64
	mtime    time.Time
	sum      [32]byte
	link     string
}

// snapshot records every file under dir (links not followed) by path
// relative to dir.
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
			e.link, _ = os.Readlink(p)
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
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
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

// outsideAllocs snapshots everything of the host but the alloc root.
func (h *host) outsideAllocs(t *testing.T) map[string]entry {
	t.Helper()
	all := snapshot(t, h.dir)
	for k := range all {
		if k == "allocs" || strings.HasPrefix(k, "allocs/") {
			delete(all, k)
		}
	}
	// The alloc root itself (its mode) counts.
	fi, err := os.Lstat(h.allocs)
	if err != nil {
		t.Fatal(err)
	}
	all["allocs"] = entry{mode: fi.Mode()}
	return all
}
