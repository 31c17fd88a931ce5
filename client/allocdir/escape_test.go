package allocdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// TestBadTaskNamesGetNoDirectory is the alloc-dir layer's defence when a
// bad task name slips past the server: no path, a failing Build, and not a
// byte changed anywhere (the alloc root, the host).
func TestBadTaskNamesGetNoDirectory(t *testing.T) {
	for _, name := range []string{
		"", ".", "..", "../x", "../../x", "../../../x", "../../host/rootonly",
		"web/../../../x", "a/b", "/abs", "web/", "web\x00", "\x00",
		strings.Repeat("a", MaxNameLength+1),
		"alloc", ".shims", ".hidden",
	} {
		t.Run(strings.ReplaceAll(name, "\x00", "NUL"), func(t *testing.T) {
			h := newHost(t)
			d := New(h.allocs, "a1")
			if err := d.Build(); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, h.dir)
			td := d.NewTaskDir(name)
			if td.Dir != "" || td.LocalDir != "" || td.SecretsDir != "" || td.TmpDir != "" || td.LogDir != "" {
				t.Errorf("a bad name got paths: %+v", td)
			}
			err := td.Build()
			if err == nil || !strings.Contains(err.Error(), "task name") {
				t.Errorf("Build = %v, want an error about the task name", err)
			}
			if out, errp := d.LogPaths(name); out != "" || errp != "" {
				t.Errorf("LogPaths = %q, %q", out, errp)
			}
			if d := diff(before, snapshot(t, h.dir)); d != "" {
				t.Fatalf("a refused task dir changed files:\n%s", d)
			}
		})
	}
}

func TestGoodTaskNamesGetADirectory(t *testing.T) {
	for _, name := range []string{
		"web", "my task", "web.1", "a-b_c", "web..x", "ünïcödé", "a\u2215b", strings.Repeat("a", MaxNameLength),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHost(t)
			d := New(h.allocs, "a1")
			if err := d.Build(); err != nil {
				t.Fatal(err)
			}
			td := d.NewTaskDir(name)
			if err := td.Build(); err != nil {
				t.Fatal(err)
			}
			if td.Dir != filepath.Join(h.allocs, "a1", name) {
				t.Fatalf("Dir = %q", td.Dir)
			}
			if _, err := os.Stat(td.LocalDir); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBadAllocIDGetsNoDirectory(t *testing.T) {
	for _, id := range []string{"", "..", "../x", "a/b", "a\x00"} {
		h := newHost(t)
		before := snapshot(t, h.dir)
		d := New(h.allocs, id)
		if d.AllocDir != "" || d.SharedDir != "" || d.LogDir != "" {
			t.Errorf("%q: paths %+v", id, d)
		}
		if err := d.Build(); err == nil {
			t.Errorf("%q: Build succeeded", id)
		}
		if err := d.NewTaskDir("web").Build(); err == nil {
			t.Errorf("%q: task Build succeeded", id)
		}
		if err := d.Destroy(); err != nil {
			t.Errorf("%q: Destroy: %v", id, err)
		}
		if d := diff(before, snapshot(t, h.dir)); d != "" {
			t.Fatalf("%q: files changed:\n%s", id, d)
		}
	}
}

// TestPlantedLinksAreNeverFollowed plants links where the alloc and task
// directories' entries are (as a task could, or a task running as root in
// a container), then rebuilds (a restart) and destroys: nothing outside
// the alloc dir is created, written or chmod-ed, and Destroy removes the
// links, not their targets.
func TestPlantedLinksAreNeverFollowed(t *testing.T) {
	cases := []struct {
		name   string
		entry  string // relative to the alloc dir, replaced by a link
		target func(h *host) string
		// alloc: the alloc dir's Build meets the link; else the task's.
		alloc bool
	}{
		{name: "local to a root-only dir", entry: "web/local", target: rootOnly},
		{name: "secrets to a root-only dir", entry: "web/secrets", target: rootOnly},
		{name: "tmp to a root-only dir", entry: "web/tmp", target: rootOnly},
		{name: "local to a file", entry: "web/local", target: secretFile},
		{name: "task dir to a root-only dir", entry: "web", target: rootOnly},
		{name: "task dir inside the alloc", entry: "web", target: func(*host) string { return "alloc/data" }},
		{name: "local loop", entry: "web/local", target: func(*host) string { return "local" }},
		{name: "local dangling", entry: "web/local", target: func(h *host) string { return filepath.Join(h.outside, "new") }},
		{name: "logs to a root-only dir", entry: "alloc/logs", target: rootOnly, alloc: true},
		{name: "logs relative out", entry: "alloc/logs", target: func(*host) string { return "../../../host/rootonly" }, alloc: true},
		{name: "data to a root-only dir", entry: "alloc/data", target: rootOnly, alloc: true},
		{name: "shared tmp to a root-only dir", entry: "alloc/tmp", target: rootOnly, alloc: true},
		{name: "alloc to the host", entry: "alloc", target: func(h *host) string { return h.outside }, alloc: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t)
			d := New(h.allocs, "a1")
			if err := d.Build(); err != nil {
				t.Fatal(err)
			}
			td := d.NewTaskDir("web")
			if err := td.Build(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(d.AllocDir, tc.entry)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.target(h), p); err != nil {
				t.Fatal(err)
			}
			before := h.outsideAllocs(t)

			err := td.Build()
			if tc.alloc {
				err = d.Build()
			}
			if !errors.Is(err, beneath.ErrSymlink) {
				t.Errorf("rebuild = %v, want ErrSymlink", err)
			}
			if d := diff(before, h.outsideAllocs(t)); d != "" {
				t.Fatalf("the rebuild changed the host:\n%s", d)
			}
			if err := d.Destroy(); err != nil {
				t.Fatal(err)
			}
			if d := diff(before, h.outsideAllocs(t)); d != "" {
				t.Fatalf("Destroy changed the host:\n%s", d)
			}
			if _, err := os.Lstat(d.AllocDir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("alloc dir still there: %v", err)
			}
		})
	}
}

// TestDestroyRemovesLinksNotTargets fills a task's directories with links
// to the host, as a task could: Destroy removes them and keeps the host.
func TestDestroyRemovesLinksNotTargets(t *testing.T) {
	h := newHost(t)
	d := New(h.allocs, "a1")
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	td := d.NewTaskDir("web")
	if err := td.Build(); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"web/local/escape":             h.outside,
		"web/local/deep/er/rootonly":   filepath.Join(h.outside, "rootonly"),
		"web/tmp/secret":               filepath.Join(h.outside, "secret.txt"),
		"alloc/data/up":                "../../../../host",
		"alloc/logs/web.stdout.0":      filepath.Join(h.outside, "secret.txt"),
		"web/secrets/loop":             "loop",
		"alloc/tmp/dangling":           filepath.Join(h.outside, "missing"),
		"web/local/deep/er/rel-inside": "../../escape",
	} {
		p := filepath.Join(d.AllocDir, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	before := h.outsideAllocs(t)
	if err := d.Destroy(); err != nil {
		t.Fatal(err)
	}
	if d := diff(before, h.outsideAllocs(t)); d != "" {
		t.Fatalf("Destroy changed the host:\n%s", d)
	}
	if _, err := os.Lstat(d.AllocDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("alloc dir still there: %v", err)
	}
}

func rootOnly(h *host) string   { return filepath.Join(h.outside, "rootonly") }
func secretFile(h *host) string { return filepath.Join(h.outside, "secret.txt") }
