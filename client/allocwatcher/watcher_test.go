package allocwatcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/structs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRunner is an AllocRunnerMeta whose versions the test sends.
type fakeRunner struct {
	dir *allocdir.AllocDir

	mu     sync.Mutex
	last   *structs.Allocation
	ls     []*fakeListener
	closed bool
}

type fakeListener struct {
	ch chan *structs.Allocation
}

func (l *fakeListener) Ch() <-chan *structs.Allocation { return l.ch }
func (l *fakeListener) Close()                         {}

func (r *fakeRunner) Alloc() *structs.Allocation   { return r.last }
func (r *fakeRunner) AllocDir() *allocdir.AllocDir { return r.dir }
func (r *fakeRunner) Listen() AllocListener {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := &fakeListener{ch: make(chan *structs.Allocation, 1)}
	if r.closed {
		close(l.ch)
		return l
	}
	if r.last != nil {
		l.ch <- r.last
	}
	r.ls = append(r.ls, l)
	return l
}

func (r *fakeRunner) listeners() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ls)
}

// send publishes a version with the given client status.
func (r *fakeRunner) send(status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = &structs.Allocation{ID: "prev", ClientStatus: status}
	for _, l := range r.ls {
		select {
		case <-l.ch:
		default:
		}
		l.ch <- r.last
	}
}

func (r *fakeRunner) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, l := range r.ls {
		close(l.ch)
	}
	r.ls = nil
}

// settle waits until every other goroutine of the test's synctest bubble
// is durably blocked (synctest.Wait: the watcher has done all it can
// without time passing), then requires cond.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("the watcher settled without %s", what)
	}
}

func newAlloc(prev string, disk *structs.EphemeralDisk, preempted ...string) *structs.Allocation {
	job := &structs.Job{ID: "j", TaskGroups: []*structs.TaskGroup{{Name: "g", EphemeralDisk: disk,
		Tasks: []*structs.Task{{Name: "web"}, {Name: "side"}}}}}
	return &structs.Allocation{ID: structs.GenerateUUID(), Job: job, JobID: "j", TaskGroup: "g",
		PreviousAllocation: prev, PreemptedAllocations: preempted}
}

func TestNewAllocWatcherChoosesKind(t *testing.T) {
	r := &fakeRunner{}
	srv := &fakeServers{}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no previous alloc", Config{Alloc: newAlloc("", nil), PreviousRunner: r}, "noop"},
		{"local", Config{Alloc: newAlloc("prev", nil), PreviousRunner: r, Servers: srv}, "local"},
		{"remote", Config{Alloc: newAlloc("prev", nil), Servers: srv}, "remote"},
		{"unknown and no servers", Config{Alloc: newAlloc("prev", nil)}, "noop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := "?"
				switch NewAllocWatcher(tc.cfg).(type) {
				case NoopPrevAllocWatcher:
					got = "noop"
				case *localWatcher:
					got = "local"
				case *remoteWatcher:
					got = "remote"
				}
				if got != tc.want {
					t.Errorf("watcher = %s, want %s", got, tc.want)
				}
			})
		})
	}
	if _, ok := NewPreemptedAllocWatcher(Config{Alloc: newAlloc("", nil)}).(NoopPrevAllocWatcher); !ok {
		t.Error("an alloc that preempts nothing must get a no-op watcher")
	}
}

func TestLocalWatcherWaitsForTerminal(t *testing.T) {
	cases := []struct {
		name   string
		finish func(r *fakeRunner)
	}{
		{"complete", func(r *fakeRunner) { r.send(structs.AllocClientStatusComplete) }},
		{"failed", func(r *fakeRunner) { r.send(structs.AllocClientStatusFailed) }},
		{"runner destroyed", func(r *fakeRunner) { r.close() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &fakeRunner{}
				r.send(structs.AllocClientStatusRunning)
				w := NewAllocWatcher(Config{Alloc: newAlloc("prev", nil), PreviousRunner: r})
				done := make(chan error, 1)
				go func() { done <- w.Wait(context.Background()) }()
				settle(t, "listening", func() bool { return r.listeners() == 1 && w.IsWaiting() })
				r.send(structs.AllocClientStatusRunning)
				select {
				case err := <-done:
					t.Fatalf("Wait returned before the previous alloc terminated: %v", err)
				case <-time.After(20 * time.Millisecond):
				}
				tc.finish(r)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				if w.IsWaiting() {
					t.Error("IsWaiting after Wait returned")
				}
			})
		})
	}
}

func TestLocalWatcherWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{}
		w := NewAllocWatcher(Config{Alloc: newAlloc("prev", nil), PreviousRunner: r})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Wait(ctx) }()
		settle(t, "waiting", w.IsWaiting)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait = %v, want context.Canceled", err)
		}
	})
}

func buildDir(t *testing.T, root, id string, tasks ...string) *allocdir.AllocDir {
	t.Helper()
	d := allocdir.New(root, id)
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if err := d.NewTaskDir(task).Build(); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLocalMigrateMovesData(t *testing.T) {
	cases := []struct {
		name string
		disk *structs.EphemeralDisk
		move bool
	}{
		{"sticky and migrate", &structs.EphemeralDisk{Sticky: true, Migrate: true}, true},
		{"sticky", &structs.EphemeralDisk{Sticky: true}, true},
		{"not sticky", &structs.EphemeralDisk{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				root := t.TempDir()
				old := buildDir(t, root, "old", "web")
				writeFile(t, filepath.Join(old.SharedDir, "data", "db", "state.txt"), "hello")
				writeFile(t, filepath.Join(old.AllocDir, "web", "local", "cache.txt"), "warm")
				// The new alloc's dir is built before the hook migrates; its
				// task dirs are not (task runners build them later).
				dest := buildDir(t, root, "new")
				r := &fakeRunner{dir: old}
				r.send(structs.AllocClientStatusComplete)
				w := NewAllocWatcher(Config{Alloc: newAlloc("old", tc.disk), PreviousRunner: r})
				if err := w.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := w.Migrate(context.Background(), dest); err != nil {
					t.Fatal(err)
				}
				_, err := os.Stat(filepath.Join(dest.SharedDir, "data", "db", "state.txt"))
				if moved := err == nil; moved != tc.move {
					t.Fatalf("data moved = %v, want %v (%v)", moved, tc.move, err)
				}
				if !tc.move {
					return
				}
				if got := readFile(t, filepath.Join(dest.SharedDir, "data", "db", "state.txt")); got != "hello" {
					t.Errorf("state.txt = %q", got)
				}
				if got := readFile(t, filepath.Join(dest.AllocDir, "web", "local", "cache.txt")); got != "warm" {
					t.Errorf("cache.txt = %q", got)
				}
				if _, err := os.Stat(filepath.Join(old.SharedDir, "data")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("old data dir still there: %v", err)
				}
				// The task dir builds over the moved local dir.
				if err := dest.NewTaskDir("web").Build(); err != nil {
					t.Fatal(err)
				}
				if got := readFile(t, filepath.Join(dest.AllocDir, "web", "local", "cache.txt")); got != "warm" {
					t.Errorf("after task dir build: cache.txt = %q", got)
				}
			})
		})
	}
}

func TestMoveAllocDataKeepsExistingData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		old := buildDir(t, root, "old")
		dest := buildDir(t, root, "new")
		writeFile(t, filepath.Join(old.SharedDir, "data", "a"), "old")
		writeFile(t, filepath.Join(dest.SharedDir, "data", "b"), "new")
		if err := MoveAllocData(old, dest, nil); err == nil {
			t.Fatal("moving over a non-empty data dir must fail")
		}
		if got := readFile(t, filepath.Join(dest.SharedDir, "data", "b")); got != "new" {
			t.Errorf("b = %q", got)
		}
	})
}

func TestGroupWatcherWaitsForAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		runners := map[string]AllocRunnerMeta{}
		var fakes []*fakeRunner
		var ids []string
		for _, id := range []string{"a", "b", "c"} {
			r := &fakeRunner{}
			r.send(structs.AllocClientStatusRunning)
			runners[id] = r
			fakes = append(fakes, r)
			ids = append(ids, id)
		}
		w := NewPreemptedAllocWatcher(Config{Alloc: newAlloc("", nil, ids...), PreemptedRunners: runners})
		done := make(chan error, 1)
		go func() { done <- w.Wait(context.Background()) }()
		settle(t, "waiting", w.IsWaiting)
		for i, r := range fakes {
			settle(t, "listener", func() bool { return r.listeners() == 1 })
			r.send(structs.AllocClientStatusComplete)
			if i < len(fakes)-1 {
				select {
				case err := <-done:
					t.Fatalf("Wait returned after %d of %d: %v", i+1, len(fakes), err)
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := w.Migrate(context.Background(), nil); err != nil || w.IsMigrating() {
			t.Errorf("Migrate = %v", err)
		}
	})
}
