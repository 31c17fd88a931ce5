package allocdir

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestViewer reads an alloc dir as the alloc fs API does, with links a
// task planted and Drover's own .shims directory in it.
func TestViewer(t *testing.T) {
	h := newHost(t)
	d := New(h.allocs, "a1")
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	if err := d.NewTaskDir("web").Build(); err != nil {
		t.Fatal(err)
	}
	a := d.AllocDir
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(a, "web/local/hello.txt"), []byte("hello, world\n"), 0o644))
	must(os.MkdirAll(filepath.Join(a, ".shims/web-1234"), 0o700))
	must(os.WriteFile(filepath.Join(a, ".shims/web-1234/spec.json"), []byte(`{"env":["TOKEN=s3cret"]}`), 0o600))
	for link, target := range map[string]string{
		"web/local/inside":       "hello.txt",
		"web/local/up-inside":    "../../web/local/hello.txt",
		"web/local/dir-inside":   "../local",
		"web/local/abs":          filepath.Join(h.outside, "secret.txt"),
		"web/local/escape":       "../../../../host/secret.txt",
		"web/local/escape-dir":   "../../../../host",
		"web/local/to-shims":     "../../.shims/web-1234/spec.json",
		"web/local/to-shims-dir": "../../.shims",
		"web/local/loop":         "loop",
		"web/local/dangling":     "missing",
	} {
		must(os.Symlink(target, filepath.Join(a, link)))
	}
	must(syscall.Mkfifo(filepath.Join(a, "web/local/fifo"), 0o666))
	// The docker driver's log position, in the task dir: Drover's own.
	must(os.WriteFile(filepath.Join(a, "web/.docker-logs.pos"), []byte("x"), 0o600))
	// The tasks' own dot-files stay visible.
	must(os.WriteFile(filepath.Join(a, "alloc/data/.env"), []byte("mine\n"), 0o644))
	must(os.WriteFile(filepath.Join(a, "web/local/.rc"), []byte("mine\n"), 0o644))

	v, err := OpenViewer(a)
	must(err)
	defer v.Close()

	t.Run("list hides Drover's own entries", func(t *testing.T) {
		for _, p := range []string{"", "/", ".", "web/.."} {
			entries, _, err := v.List(p)
			must(err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if got := strings.Join(names, ","); got != "alloc,web" {
				t.Errorf("List(%q) = %s, want alloc,web", p, got)
			}
		}
		for dir, want := range map[string]string{"web": "local,secrets,tmp", "alloc/data": ".env"} {
			entries, _, err := v.List(dir)
			must(err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if got := strings.Join(names, ","); got != want {
				t.Errorf("List(%q) = %s, want %s", dir, got, want)
			}
		}
		entries, name, err := v.List("web/local/dir-inside")
		must(err)
		if name != "web/local" || len(entries) == 0 {
			t.Errorf("List through an inside link: %q, %d entries", name, len(entries))
		}
	})

	cases := []struct {
		path    string
		want    string // content; "" when an error is wanted
		wantErr error
	}{
		{path: "web/local/hello.txt", want: "hello, world\n"},
		{path: "/web/local/hello.txt", want: "hello, world\n"},
		{path: "web/../web/local/hello.txt", want: "hello, world\n"},
		{path: "web/local/inside", want: "hello, world\n"},
		{path: "web/local/up-inside", want: "hello, world\n"},
		{path: "web/local/dir-inside/hello.txt", want: "hello, world\n"},
		{path: "../host/secret.txt", wantErr: ErrOutside},
		{path: "web/../../host/secret.txt", wantErr: ErrOutside},
		{path: "web/local/abs", wantErr: ErrOutside},
		{path: "web/local/escape", wantErr: ErrOutside},
		{path: "web/local/escape-dir/secret.txt", wantErr: ErrOutside},
		{path: ".shims/web-1234/spec.json", wantErr: fs.ErrNotExist},
		{path: "/.shims", wantErr: fs.ErrNotExist},
		{path: "web/../.shims/web-1234/spec.json", wantErr: fs.ErrNotExist},
		{path: "web/local/to-shims", wantErr: fs.ErrNotExist},
		{path: "web/local/to-shims-dir/web-1234/spec.json", wantErr: fs.ErrNotExist},
		{path: "web/.docker-logs.pos", wantErr: fs.ErrNotExist},
		{path: "alloc/data/.env", want: "mine\n"},
		{path: "web/local/.rc", want: "mine\n"},
		{path: "web/local/loop", wantErr: ErrBadPath},
		{path: "web/local/dangling", wantErr: fs.ErrNotExist},
		{path: "web/local/hello.txt/x", wantErr: fs.ErrNotExist},
		{path: "web/local/fifo", wantErr: ErrNotRegular},
		{path: "web/local", wantErr: ErrIsDir},
		{path: "web/\x00", wantErr: ErrBadPath},
	}
	for _, tc := range cases {
		t.Run("open "+strings.ReplaceAll(tc.path, "\x00", "NUL"), func(t *testing.T) {
			f, _, err := v.Open(tc.path)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Open = %v, want %v", err, tc.wantErr)
				}
				if _, err := v.Stat(tc.path); err == nil && !errors.Is(tc.wantErr, ErrIsDir) && !errors.Is(tc.wantErr, ErrNotRegular) {
					t.Fatalf("Stat succeeded where Open fails with %v", tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			if string(b) != tc.want {
				t.Fatalf("read %q, want %q", b, tc.want)
			}
		})
	}

	t.Run("messages", func(t *testing.T) {
		for p, want := range map[string]string{
			"../x":             `path "../x" is outside the allocation directory`,
			"web/local/escape": `path "web/local/escape" is a symlink that points outside the allocation directory`,
			".shims":           `no such file or directory in the allocation: ".shims"`,
		} {
			if _, err := v.Stat(p); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Stat(%q) = %v, want %q", p, err, want)
			}
		}
		if _, _, err := v.List("web/local/hello.txt"); !errors.Is(err, ErrNotDir) {
			t.Errorf("List of a file: %v", err)
		}
	})
}
