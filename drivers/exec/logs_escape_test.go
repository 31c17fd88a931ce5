package exec

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTaskCannotRedirectItsLogs reproduces issue 19's log escape end to
// end: an exec task running as nobody plants a link named like its next
// rotated log file, pointing into a root-only host directory, then writes
// enough to rotate. The shim (root) must not follow it. With alloc/logs
// world-writable (the layout before the fix, and what a task running as
// root in a container can still do) the task plants the link and the shim
// replaces it; with alloc/logs as allocdir builds it now (0755) the task
// cannot plant anything. A link planted before the start (by root) in
// place of the first stderr file is replaced too. Either way the host
// directory is untouched and no output is lost.
func TestTaskCannotRedirectItsLogs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		logsPerm os.FileMode
		planted  bool
	}{
		{"world-writable logs dir", 0o777 | os.ModeSticky, true},
		{"logs dir as allocdir builds it", 0o755, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			host := filepath.Join(t.TempDir(), "rootonly")
			if err := os.Mkdir(host, 0o700); err != nil {
				t.Fatal(err)
			}
			sentinel := filepath.Join(host, "passwd")
			if err := os.WriteFile(sentinel, []byte("root:x:0:0\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			before := dirState(t, host)

			const lines = 2500 // of 1000 bytes: two rotations at 1 MB
			cfg := h.sh(fmt.Sprintf(`
if ln -s %[1]s/stdout-1 /alloc/logs/web.stdout.1 2>/dev/null && ln -s %[1]s/passwd /alloc/logs/web.stdout.2; then
	echo planted >&2
else
	echo refused >&2
fi
i=0; while [ $i -lt %[2]d ]; do printf '%%0999d\n' $i; i=$((i+1)); done
echo done >&2`, host, lines))
			cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = 5, 1
			if err := os.Chmod(cfg.TaskDir.LogDir, tc.logsPerm); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(sentinel, cfg.StderrPath); err != nil {
				t.Fatal(err)
			}
			h.start(cfg)
			t.Cleanup(func() {
				if t.Failed() {
					logs, _ := filepath.Glob(filepath.Join(cfg.AllocDir, ".shims", "*", "shim.log"))
					for _, l := range logs {
						b, _ := os.ReadFile(l)
						t.Logf("%s:\n%s", l, b)
					}
				}
			})
			if res := h.wait(cfg.ID); !res.Successful() {
				t.Fatalf("exit %+v: %s", res, stderr(t, cfg))
			}

			if after := dirState(t, host); after != before {
				t.Fatalf("the shim wrote into the host directory:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			errOut := stderr(t, cfg)
			want := "refused"
			if tc.planted {
				want = "planted"
			}
			if !strings.HasPrefix(errOut, want+"\n") || !strings.HasSuffix(errOut, "done\n") {
				t.Fatalf("stderr %q, want %q then done", errOut, want)
			}
			// Every line is in the task's own regular log files, in order.
			var all strings.Builder
			for n := 0; ; n++ {
				p := filepath.Join(cfg.TaskDir.LogDir, fmt.Sprintf("web.stdout.%d", n))
				fi, err := os.Lstat(p)
				if err != nil {
					break
				}
				if !fi.Mode().IsRegular() {
					t.Fatalf("%s is a %v", p, fi.Mode())
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				all.WriteString(string(b))
			}
			got := strings.Split(strings.TrimSuffix(all.String(), "\n"), "\n")
			if len(got) != lines || got[0] != fmt.Sprintf("%0999d", 0) || got[lines-1] != fmt.Sprintf("%0999d", lines-1) {
				t.Fatalf("the logs hold %d lines, want %d", len(got), lines)
			}
		})
	}
}

// dirState describes every file under dir: name, mode, size, content.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %v", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %.80q", c)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
