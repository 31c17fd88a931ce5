package allocwatcher

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/structs"
)

// fakeServers is a ServerLookup over a map, with blocking queries.
type fakeServers struct {
	mu      sync.Mutex
	index   uint64
	changed chan struct{}
	allocs  map[string]*structs.Allocation
	addrs   map[string]string
	queries int
	blocked chan struct{} // closed when a query first blocks
}

func newFakeServers() *fakeServers {
	return &fakeServers{index: 1, changed: make(chan struct{}), allocs: map[string]*structs.Allocation{}, addrs: map[string]string{},
		blocked: make(chan struct{})}
}

func (s *fakeServers) put(a *structs.Allocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index++
	s.allocs[a.ID] = a
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *fakeServers) AllocByID(ctx context.Context, id string, minIndex uint64) (*structs.Allocation, uint64, error) {
	for {
		s.mu.Lock()
		s.queries++
		if s.index > minIndex {
			a, idx := s.allocs[id], s.index
			s.mu.Unlock()
			return a, idx, nil
		}
		ch := s.changed
		select {
		case <-s.blocked:
		default:
			close(s.blocked)
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
}

func (s *fakeServers) NodeHTTPAddr(ctx context.Context, nodeID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	addr, ok := s.addrs[nodeID]
	if !ok {
		return "", structs.NotFound("node", nodeID)
	}
	return addr, nil
}

func TestRemoteWatcherWaitsAndMigrates(t *testing.T) {
	root := t.TempDir()
	old := buildDir(t, root, "old", "web")
	writeFile(t, filepath.Join(old.SharedDir, "data", "db", "state.txt"), "hello")
	writeFile(t, filepath.Join(old.AllocDir, "web", "local", "cache.txt"), "warm")
	if err := os.Symlink("db/state.txt", filepath.Join(old.SharedDir, "data", "link")); err != nil {
		t.Fatal(err)
	}
	var served int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != SnapshotPath("old") {
			http.NotFound(w, r)
			return
		}
		served++
		if err := WriteSnapshot(w, old, []string{"web", "side"}); err != nil {
			t.Error(err)
		}
	}))
	defer ts.Close()

	srv := newFakeServers()
	srv.addrs["node-a"] = strings.TrimPrefix(ts.URL, "http://")
	srv.put(&structs.Allocation{ID: "old", NodeID: "node-a", ClientStatus: structs.AllocClientStatusRunning})
	w := NewAllocWatcher(Config{Alloc: newAlloc("old", &structs.EphemeralDisk{Sticky: true, Migrate: true}),
		Servers: srv, NodeID: "node-b", HTTPClient: ts.Client()})
	done := make(chan error, 1)
	go func() { done <- w.Wait(context.Background()) }()
	select {
	case <-srv.blocked: // the watcher waits in a blocking query
	case <-time.After(time.Minute):
		t.Fatal("the watcher never waited in a blocking query")
	}
	srv.mu.Lock()
	queries := srv.queries
	srv.mu.Unlock()
	if queries < 2 {
		t.Errorf("%d queries when one blocked, want at least 2", queries)
	}
	if !w.IsWaiting() {
		t.Error("IsWaiting = false while the previous alloc runs")
	}
	srv.put(&structs.Allocation{ID: "old", NodeID: "node-a", ClientStatus: structs.AllocClientStatusComplete})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	dest := buildDir(t, root, "new")
	if err := w.Migrate(context.Background(), dest); err != nil {
		t.Fatal(err)
	}
	if served != 1 {
		t.Errorf("snapshot served %d times", served)
	}
	if got := readFile(t, filepath.Join(dest.SharedDir, "data", "db", "state.txt")); got != "hello" {
		t.Errorf("state.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(dest.SharedDir, "data", "link")); got != "hello" {
		t.Errorf("through link = %q", got)
	}
	if got := readFile(t, filepath.Join(dest.AllocDir, "web", "local", "cache.txt")); got != "warm" {
		t.Errorf("cache.txt = %q", got)
	}
}

func TestRemoteMigrateSkipsUnreachableNode(t *testing.T) {
	srv := newFakeServers()
	srv.put(&structs.Allocation{ID: "old", NodeID: "gone", ClientStatus: structs.AllocClientStatusLost})
	w := NewAllocWatcher(Config{Alloc: newAlloc("old", &structs.EphemeralDisk{Sticky: true, Migrate: true}), Servers: srv, NodeID: "me"})
	if err := w.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := w.Migrate(context.Background(), buildDir(t, t.TempDir(), "new")); err != nil {
		t.Fatalf("an unknown node must not fail the alloc: %v", err)
	}
}

func TestRemoteWatcherAllocGone(t *testing.T) {
	srv := newFakeServers()
	w := NewAllocWatcher(Config{Alloc: newAlloc("old", nil), Servers: srv})
	if err := w.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	root := t.TempDir()
	src := buildDir(t, root, "src", "web")
	writeFile(t, filepath.Join(src.SharedDir, "data", "a", "b", "c.txt"), strings.Repeat("x", 100_000))
	writeFile(t, filepath.Join(src.AllocDir, "web", "local", "conf"), "c")
	writeFile(t, filepath.Join(src.AllocDir, "web", "secrets", "token"), "must not travel")
	writeFile(t, filepath.Join(src.SharedDir, "logs", "web.stdout.0"), "must not travel")
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, src, []string{"web"}); err != nil {
		t.Fatal(err)
	}
	dest := buildDir(t, root, "dest")
	if err := Unpack(bytes.NewReader(buf.Bytes()), dest.AllocDir, UnpackLimits{MaxBytes: 1 << 20, Tasks: []string{"web"}}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dest.SharedDir, "data", "a", "b", "c.txt")); len(got) != 100_000 {
		t.Errorf("c.txt has %d bytes", len(got))
	}
	if got := readFile(t, filepath.Join(dest.AllocDir, "web", "local", "conf")); got != "c" {
		t.Errorf("conf = %q", got)
	}
	for _, p := range []string{"web/secrets/token", "alloc/logs/web.stdout.0"} {
		if _, err := os.Stat(filepath.Join(dest.AllocDir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was copied", p)
		}
	}
	// Over the size limit.
	err := Unpack(bytes.NewReader(buf.Bytes()), buildDir(t, root, "small").AllocDir, UnpackLimits{MaxBytes: 1000, Tasks: []string{"web"}})
	if !errors.Is(err, ErrUnsafeSnapshot) {
		t.Errorf("over the limit: %v", err)
	}
}

type entry struct {
	name string
	typ  byte
	body string
	link string
}

func makeTar(t *testing.T, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		size := int64(len(e.body))
		if e.typ != tar.TypeReg {
			size = 0
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644, Size: size}); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUnpackRejectsMaliciousSnapshots(t *testing.T) {
	cases := []struct {
		name    string
		entries []entry
	}{
		{"absolute path", []entry{{name: "/etc/evil", typ: tar.TypeReg, body: "x"}}},
		{"dot-dot escape", []entry{{name: "alloc/data/../../../evil", typ: tar.TypeReg, body: "x"}}},
		{"dot-dot into another dir", []entry{{name: "alloc/data/../logs/evil", typ: tar.TypeReg, body: "x"}}},
		{"outside allowed dirs", []entry{{name: "web/secrets/token", typ: tar.TypeReg, body: "x"}}},
		{"unknown task", []entry{{name: "other/local/x", typ: tar.TypeReg, body: "x"}}},
		{"absolute symlink", []entry{{name: "alloc/data/l", typ: tar.TypeSymlink, link: "/etc/passwd"}}},
		{"escaping symlink", []entry{{name: "alloc/data/l", typ: tar.TypeSymlink, link: "../../../../etc"}}},
		{"write through symlink", []entry{
			{name: "alloc/data/l", typ: tar.TypeSymlink, link: "../tmp"},
			{name: "alloc/data/l/evil", typ: tar.TypeReg, body: "x"},
		}},
		{"overwrite symlink", []entry{
			{name: "alloc/data/l", typ: tar.TypeSymlink, link: "../tmp/f"},
			{name: "alloc/data/l", typ: tar.TypeReg, body: "x"},
		}},
		{"hard link", []entry{{name: "alloc/data/h", typ: tar.TypeLink, link: "alloc/data/x"}}},
		{"device", []entry{{name: "alloc/data/dev", typ: tar.TypeChar}}},
		{"too large", []entry{{name: "alloc/data/big", typ: tar.TypeReg, body: strings.Repeat("x", 2048)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dest := allocdir.New(root, "a")
			if err := dest.Build(); err != nil {
				t.Fatal(err)
			}
			err := Unpack(bytes.NewReader(makeTar(t, tc.entries)), dest.AllocDir, UnpackLimits{MaxBytes: 1024, Tasks: []string{"web"}})
			if !errors.Is(err, ErrUnsafeSnapshot) {
				t.Fatalf("Unpack = %v, want ErrUnsafeSnapshot", err)
			}
			for _, p := range []string{filepath.Join(root, "evil"), filepath.Join(dest.SharedDir, "tmp", "evil"),
				filepath.Join(dest.SharedDir, "logs", "evil"), filepath.Join(dest.SharedDir, "tmp", "f")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
}

func TestUnpackRejectsGarbage(t *testing.T) {
	if err := Unpack(strings.NewReader("not gzip"), t.TempDir(), UnpackLimits{MaxBytes: 10}); err == nil {
		t.Fatal("Unpack of garbage succeeded")
	}
}
