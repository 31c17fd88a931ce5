package shim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestLogBases(t *testing.T) {
	cases := []struct {
		name                   string
		stdout, stderr, logDir string
		wantOut, wantErr       string
		fails                  bool
	}{
		{name: "client paths lose .0", stdout: "/a/alloc/logs/web.stdout.0", stderr: "/a/alloc/logs/web.stderr.0",
			wantOut: "/a/alloc/logs/web.stdout", wantErr: "/a/alloc/logs/web.stderr"},
		{name: "other paths are bases", stdout: "/l/out.log", stderr: "/l/err.log", wantOut: "/l/out.log", wantErr: "/l/err.log"},
		{name: "from the log dir", logDir: "/a/alloc/logs", wantOut: "/a/alloc/logs/web.stdout", wantErr: "/a/alloc/logs/web.stderr"},
		{name: "nothing", fails: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &drivers.TaskConfig{Name: "web", StdoutPath: tc.stdout, StderrPath: tc.stderr, TaskDir: drivers.TaskDir{LogDir: tc.logDir}}
			out, errPath, err := LogBases(cfg)
			if (err != nil) != tc.fails {
				t.Fatalf("err = %v", err)
			}
			if out != tc.wantOut || errPath != tc.wantErr {
				t.Fatalf("got %q %q, want %q %q", out, errPath, tc.wantOut, tc.wantErr)
			}
		})
	}
}

func TestTaskStateDir(t *testing.T) {
	cases := []struct {
		name, id, task, allocDir, want string
	}{
		{"client task ID", "0b6c-alloc/web/1a2b3c4d", "web", "/d/alloc/0b6c", "/d/alloc/0b6c/.shims/web-1a2b3c4d"},
		{"plain ID", "t1", "web", "/d/a", "/d/a/.shims/web-t1"},
		{"hostile names stay inside", "x/../..", "../../etc", "/d/a", "/d/a/.shims/.._.._etc-.."},
		{"no alloc dir", "t1", "web", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TaskStateDir(&drivers.TaskConfig{ID: tc.id, Name: tc.task, AllocDir: tc.allocDir})
			if tc.want == "" {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if filepath.Dir(got) != filepath.Join(tc.allocDir, StatesDir) {
				t.Fatalf("%q is not directly under the shims dir", got)
			}
		})
	}
}

func TestRemoveDeadState(t *testing.T) {
	cfg := &drivers.TaskConfig{ID: "a/web/inv1", Name: "web", AllocDir: t.TempDir()}
	dir, err := TaskStateDir(cfg)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	cases := []struct {
		name    string
		st      *State
		fails   bool
		removed string
	}{
		{name: "elsewhere is left alone", st: &State{StateDir: other, SocketPath: SocketPathFor(other)}, fails: true},
		{name: "its own dir is removed", st: &State{StateDir: dir, SocketPath: SocketPathFor(dir)}, removed: dir},
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := RemoveDeadState(cfg, tc.st)
			if (err != nil) != tc.fails {
				t.Fatalf("err = %v", err)
			}
			if _, err := os.Stat(tc.st.StateDir); tc.removed != "" && !os.IsNotExist(err) {
				t.Fatalf("%s still there (%v)", tc.removed, err)
			} else if tc.removed == "" && err != nil {
				t.Fatalf("%s removed: %v", tc.st.StateDir, err)
			}
		})
	}
}
