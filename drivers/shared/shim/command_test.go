package shim

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/shared/isolation"
)

func TestCommandBeside(t *testing.T) {
	script := func(out string) string { return "#!/bin/sh\necho '" + out + "'\n" }
	tests := []struct {
		name   string
		shim   string // the script installed as Binary; "" for none
		mode   os.FileMode
		useBin bool
	}{
		{"same identity", script(Identity()), 0o755, true},
		{"other identity", script(strings.Replace(Identity(), "protocol=", "protocol=9", 1)), 0o755, false},
		{"not executable", script(Identity()), 0o644, false},
		{"fails", "#!/bin/sh\nexit 3\n", 0o755, false},
		{"absent", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "drover")
			if tt.shim != "" {
				if err := os.WriteFile(filepath.Join(dir, Binary), []byte(tt.shim), tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			want := exe
			if tt.useBin {
				want = filepath.Join(dir, Binary)
			}
			if got := commandBeside(exe); got != want {
				t.Errorf("commandBeside = %s, want %s", got, want)
			}
		})
	}
}

// TestResolverAsksOncePerBinary: a Resolver asks Binary for its Identity
// once, and again only when the file was replaced (an upgrade) or
// changed in place; what it answers follows the new file.
func TestResolverAsksOncePerBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "drover")
	bin := filepath.Join(dir, Binary)
	asked := filepath.Join(dir, "asked")
	install := func(identity string) {
		t.Helper()
		script := "#!/bin/sh\necho x >> " + asked + "\necho '" + identity + "'\n"
		tmp := bin + ".new"
		if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, bin); err != nil { // a new inode, as an upgrade installs it
			t.Fatal(err)
		}
	}
	timesAsked := func() int {
		b, err := os.ReadFile(asked)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Count(string(b), "x")
	}
	var r Resolver
	install(Identity())
	for i := range 3 {
		if got := r.beside(exe); got != bin {
			t.Fatalf("call %d: %s, want %s", i, got, bin)
		}
	}
	if n := timesAsked(); n != 1 {
		t.Fatalf("asked %d times for three calls, want once", n)
	}
	install("drover-shim some other build")
	if got := r.beside(exe); got != exe {
		t.Fatalf("after an upgrade to another build: %s, want %s", got, exe)
	}
	if got := r.beside(exe); got != exe || timesAsked() != 2 {
		t.Fatalf("second call after the upgrade: %s, asked %d times in all; want %s, 2", got, timesAsked(), exe)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if got := r.beside(exe); got != exe {
		t.Fatalf("binary removed: %s, want %s", got, exe)
	}
	install(Identity())
	if got := r.beside(exe); got != bin || timesAsked() != 3 {
		t.Fatalf("binary back: %s, asked %d times in all; want %s, 3", got, timesAsked(), bin)
	}
	ic, err := r.InitCommand()
	if err != nil {
		t.Fatal(err)
	}
	if len(ic.Args) != 1 || ic.Args[0] != isolation.InitArg {
		t.Errorf("InitCommand args %q, want [%s]", ic.Args, isolation.InitArg)
	}
}

// TestIdentityFlag runs this test binary as a shim binary would be asked.
func TestIdentityFlag(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-identity")
	cmd.Env = append(os.Environ(), envMode+"=shim")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != Identity() {
		t.Errorf("-identity printed %q, want %q", got, Identity())
	}
	for _, part := range []string{Binary, "protocol=", "state=", "exit=", "types="} {
		if !strings.Contains(Identity(), part) {
			t.Errorf("Identity() = %q lacks %q", Identity(), part)
		}
	}
}

func TestWireTypesDescribeFields(t *testing.T) {
	w := wireTypes()
	// A field of a nested type of this module, and a tag.
	for _, part := range []string{"shim.Spec{", "Isolation", "isolation.Spec{", `json:"socket_path"`, "shim.State{", "isolation.EnterSpec{"} {
		if !strings.Contains(w, part) {
			t.Errorf("wireTypes lacks %q", part)
		}
	}
}

func TestShimEnv(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"plain", []string{"PATH=/bin", "HOME=/root"},
			[]string{"PATH=/bin", "HOME=/root", "GOMAXPROCS=1", "GOGC=off", "GODEBUG=memprofilerate=0"}},
		{"the agent's settings replaced, its GODEBUG kept first",
			[]string{"GOGC=50", "GODEBUG=http2debug=1", "GOMAXPROCS=8", "GOMEMLIMIT=1GiB", "X=1"},
			[]string{"X=1", "GOMAXPROCS=1", "GOGC=off", "GODEBUG=http2debug=1,memprofilerate=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shimEnv(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("shimEnv = %q, want %q", got, tt.want)
			}
		})
	}
}
