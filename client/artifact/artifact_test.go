package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// allocDir makes an allocation directory with a task directory "web"
// holding local/, as the task runner builds it.
func allocDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "web", "local"), 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// files serves name -> content on loopback and records the requests'
// headers.
type files struct {
	srv     *httptest.Server
	mu      sync.Mutex // guards the field below
	headers []http.Header
}

func serve(t *testing.T, content map[string][]byte) *files {
	t.Helper()
	f := &files{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.headers = append(f.headers, r.Header.Clone())
		f.mu.Unlock()
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "chunked" {
			// No Content-Length: the body's size shows only as it is read.
			for range 8 {
				_, _ = w.Write(bytes.Repeat([]byte("y"), 512))
				w.(http.Flusher).Flush()
			}
			return
		}
		b, ok := content[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *files) url(name string) string { return f.srv.URL + "/" + name }

func targz(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func fetch(t *testing.T, g *Getter, dir string, a *structs.TaskArtifact) error {
	t.Helper()
	a.Canonicalize()
	return g.Fetch(context.Background(), &Request{Artifact: a, AllocDir: dir, TaskDir: "web"})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noStaging fails the test if a staging directory was left behind.
func noStaging(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".artifact-") {
			t.Errorf("staging directory %s left behind", e.Name())
		}
	}
}

func TestFetchHTTP(t *testing.T) {
	bin := []byte("#!/bin/sh\necho hi\n")
	archive := targz(t, map[string]string{"app/run.sh": "run", "app/conf/a.conf": "a=1"})
	srv := serve(t, map[string][]byte{"tool.sh": bin, "app.tar.gz": archive})
	g := New(DefaultConfig(), nil)

	tests := []struct {
		name string
		a    *structs.TaskArtifact
		want map[string]string // path beneath the task dir -> content
	}{
		{"file with checksum", &structs.TaskArtifact{GetterSource: srv.url("tool.sh"),
			GetterOptions: map[string]string{"checksum": sha(bin)}}, map[string]string{"local/tool.sh": string(bin)}},
		{"file mode to a path", &structs.TaskArtifact{GetterSource: srv.url("tool.sh"), GetterMode: "file",
			RelativeDest: "bin/tool"}, map[string]string{"bin/tool": string(bin)}},
		{"archive unpacked", &structs.TaskArtifact{GetterSource: srv.url("app.tar.gz"), RelativeDest: "local/pkg",
			GetterOptions: map[string]string{"checksum": sha(archive)}},
			map[string]string{"local/pkg/app/run.sh": "run", "local/pkg/app/conf/a.conf": "a=1"}},
		{"headers", &structs.TaskArtifact{GetterSource: srv.url("tool.sh"), GetterHeaders: map[string]string{"X-Token": "t0ken"}},
			map[string]string{"local/tool.sh": string(bin)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := allocDir(t)
			if err := fetch(t, g, dir, tc.a); err != nil {
				t.Fatal(err)
			}
			for p, want := range tc.want {
				if got := readFile(t, filepath.Join(dir, "web", p)); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			noStaging(t, dir)
		})
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	found := false
	for _, h := range srv.headers {
		found = found || h.Get("X-Token") == "t0ken"
	}
	if !found {
		t.Error("the artifact's header was not sent")
	}
}

func TestFetchRefusals(t *testing.T) {
	bin := []byte("payload")
	escape := targz(t, map[string]string{"../../escaped": "x"})
	srv := serve(t, map[string][]byte{"f": bin, "evil.tar.gz": escape, "big": bytes.Repeat([]byte("x"), 4096)})
	small := DefaultConfig()
	small.HTTPMaxBytes = 1024

	tests := []struct {
		name        string
		cfg         Config
		a           *structs.TaskArtifact
		plant       func(t *testing.T, dir string)
		recoverable bool
		want        string
	}{
		{name: "bad checksum", a: &structs.TaskArtifact{GetterSource: srv.url("f"),
			GetterOptions: map[string]string{"checksum": "sha256:" + strings.Repeat("0", 64)}}, recoverable: true, want: "checksum"},
		{name: "not found", a: &structs.TaskArtifact{GetterSource: srv.url("missing")}, recoverable: true, want: "404"},
		{name: "larger than http_max_size", cfg: small, a: &structs.TaskArtifact{GetterSource: srv.url("big")}, recoverable: true, want: "http_max_size"},
		{name: "chunked body larger than http_max_size", cfg: small, a: &structs.TaskArtifact{GetterSource: srv.url("chunked")}, recoverable: true, want: "http_max_size"},
		{name: "archive entry with ..", a: &structs.TaskArtifact{GetterSource: srv.url("evil.tar.gz")}, recoverable: true, want: ".."},
		{name: "destination leaves the task dir", a: &structs.TaskArtifact{GetterSource: srv.url("f"), RelativeDest: "../other"}, want: "leaves the task's directory"},
		{name: "link planted at the destination", a: &structs.TaskArtifact{GetterSource: srv.url("f"), RelativeDest: "local/out"},
			plant: func(t *testing.T, dir string) {
				outside := filepath.Join(dir, "..", filepath.Base(dir)+"-outside")
				if err := os.MkdirAll(outside, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(outside) })
				if err := os.Symlink(outside, filepath.Join(dir, "web", "local", "out")); err != nil {
					t.Fatal(err)
				}
			}, want: "symbolic link"},
		{name: "client file outside the alloc dir", a: &structs.TaskArtifact{GetterSource: "/etc/hostname"}, want: "outside the allocation's directory"},
		{name: "client file through a link", a: &structs.TaskArtifact{GetterSource: "local/link/hostname"},
			plant: func(t *testing.T, dir string) {
				if err := os.Symlink("/etc", filepath.Join(dir, "web", "local", "link")); err != nil {
					t.Fatal(err)
				}
			}, want: "symbolic link"},
		{name: "git repository on the client", a: &structs.TaskArtifact{GetterSource: "git::file:///etc"}, want: "refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg == (Config{}) {
				cfg = DefaultConfig()
			}
			dir := allocDir(t)
			if tc.plant != nil {
				tc.plant(t, dir)
			}
			err := fetch(t, New(cfg, nil), dir, tc.a)
			if err == nil {
				t.Fatal("fetch succeeded")
			}
			if IsRecoverable(err) != tc.recoverable || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (recoverable %v), want %q, recoverable %v", err, IsRecoverable(err), tc.want, tc.recoverable)
			}
			noStaging(t, dir)
			if _, err := os.Stat(filepath.Join(dir, "..", "escaped")); err == nil {
				t.Fatal("an archive wrote outside the allocation directory")
			}
			if matches, _ := filepath.Glob(filepath.Join(dir, "..", filepath.Base(dir)+"-outside", "*")); len(matches) > 0 {
				t.Fatalf("wrote through a link: %v", matches)
			}
		})
	}
}

func TestFetchLocalFiles(t *testing.T) {
	dir := allocDir(t)
	shared := filepath.Join(dir, "alloc", "data")
	if err := os.MkdirAll(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	archive := targz(t, map[string]string{"x.txt": "from the alloc dir"})
	if err := os.WriteFile(filepath.Join(shared, "bundle.tar.gz"), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	g := New(DefaultConfig(), nil)
	if err := fetch(t, g, dir, &structs.TaskArtifact{GetterSource: "../alloc/data/bundle.tar.gz", RelativeDest: "local/b",
		GetterOptions: map[string]string{"checksum": sha(archive)}}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "web", "local", "b", "x.txt")); got != "from the alloc dir" {
		t.Fatalf("unpacked %q", got)
	}

	// With the isolation off, the client's files may be read.
	host := filepath.Join(t.TempDir(), "host.txt")
	if err := os.WriteFile(host, []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := DefaultConfig()
	open.DisableFilesystemIsolation = true
	if err := fetch(t, New(open, nil), dir, &structs.TaskArtifact{GetterSource: host}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "web", "local", "host.txt")); got != "host file" {
		t.Fatalf("host file fetched as %q", got)
	}
}

func TestFetchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not installed, so there is no git getter to test: %v", err)
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("from git"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README", filepath.Join(repo, "LINK")); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "one")

	cfg := DefaultConfig()
	cfg.DisableFilesystemIsolation = true // the repository is on this machine
	dir := allocDir(t)
	if err := fetch(t, New(cfg, nil), dir, &structs.TaskArtifact{GetterSource: "git::file://" + repo, RelativeDest: "local/repo"}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "web", "local", "repo", "README")); got != "from git" {
		t.Fatalf("README = %q", got)
	}
	if target, err := os.Readlink(filepath.Join(dir, "web", "local", "repo", "LINK")); err != nil || target != "README" {
		t.Fatalf("link inside the task dir: %q, %v", target, err)
	}
}
