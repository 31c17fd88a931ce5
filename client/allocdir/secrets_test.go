package allocdir

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// requireRoot skips a test that mounts file systems where the test does
// not run as root (CI does).
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; CI runs this test as root")
	}
}

// mountsAt returns how many file systems are mounted on path
// (/proc/self/mountinfo's mount point field).
func mountsAt(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMountinfo(f[4]) == path {
			n++
		}
	}
	return n
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, ok := octal(s[i+1 : i+4]); ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal(s string) (byte, bool) {
	if len(s) != 3 {
		return 0, false
	}
	var v int
	for _, c := range s {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v*8 + int(c-'0')
	}
	return byte(v), true
}

// statfs returns path's file system type and mount flags.
func statfs(t *testing.T, path string) (int64, int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Type, st.Flags
}

const stNoexec = 8 // ST_NOEXEC of statfs's f_flags

// TestSecretsTmpfs: with WithSecretsTmpfs, a task's secrets directory is
// a 1 MiB noexec tmpfs, mode 0700; what a task writes there is not on the
// disk; an agent that restarts keeps the live tmpfs (its content, its
// owner) instead of mounting another over it; Destroy unmounts it.
func TestSecretsTmpfs(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	d := New(root, "a1", WithSecretsTmpfs(true))
	t.Cleanup(func() { _ = d.Destroy() })
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	td := d.NewTaskDir("web")
	if err := td.Build(); err != nil {
		t.Fatal(err)
	}
	if n := mountsAt(t, td.SecretsDir); n != 1 {
		t.Fatalf("%d file systems mounted on the secrets dir, want 1", n)
	}
	typ, flags := statfs(t, td.SecretsDir)
	if typ != tmpfsMagic {
		t.Errorf("secrets dir is on a file system of type %#x, want a tmpfs", typ)
	}
	if flags&stNoexec == 0 {
		t.Errorf("secrets tmpfs is not noexec (flags %#x)", flags)
	}
	if fi, err := os.Lstat(td.SecretsDir); err != nil || fi.Mode() != os.ModeDir|0o700 {
		t.Errorf("secrets mode %v (%v), want drwx------", fi.Mode(), err)
	}
	// The content lives in the tmpfs, not on the disk below it.
	secret := filepath.Join(td.SecretsDir, "token")
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	if typ, _ := statfs(t, secret); typ != tmpfsMagic {
		t.Errorf("a secret file is on a file system of type %#x, want the tmpfs", typ)
	}
	// 1 MiB and no more.
	big := bytes.Repeat([]byte("x"), 2<<20)
	if err := os.WriteFile(filepath.Join(td.SecretsDir, "big"), big, 0o600); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing 2 MiB in the secrets dir: %v, want ENOSPC", err)
	}
	_ = os.Remove(filepath.Join(td.SecretsDir, "big"))
	// The exec driver gives the dir to the task's user.
	if err := os.Chown(td.SecretsDir, 65534, 65534); err != nil {
		t.Fatal(err)
	}

	// An agent restart: a new AllocDir builds the same dirs again.
	d2 := New(root, "a1", WithSecretsTmpfs(true))
	if err := d2.Build(); err != nil {
		t.Fatal(err)
	}
	td2 := d2.NewTaskDir("web")
	if err := td2.Build(); err != nil {
		t.Fatal(err)
	}
	if n := mountsAt(t, td2.SecretsDir); n != 1 {
		t.Errorf("%d file systems mounted on the secrets dir after a restart, want the one kept", n)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "s3cr3t" {
		t.Errorf("secret after a restart: %q, %v", b, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(td2.SecretsDir, &st); err != nil || st.Uid != 65534 || st.Mode&0o7777 != 0o700 {
		t.Errorf("secrets dir after a restart: uid %d mode %o (%v), want the task user's, 0700", st.Uid, st.Mode&0o7777, err)
	}

	// Destroy unmounts it, the restored AllocDir as well as the first.
	if err := d2.Destroy(); err != nil {
		t.Fatal(err)
	}
	if n := mountsAt(t, td2.SecretsDir); n != 0 {
		t.Errorf("%d file systems still mounted on the secrets dir after Destroy", n)
	}
	if _, err := os.Stat(d2.AllocDir); !os.IsNotExist(err) {
		t.Errorf("alloc dir after Destroy: %v", err)
	}
}

// TestSecretsTmpfsRefused: where no tmpfs can be mounted (an agent that
// is not root), the secrets dir is a plain 0700 directory and a warning
// says so; the task dir builds.
func TestSecretsTmpfsRefused(t *testing.T) {
	var logs bytes.Buffer
	d := New(t.TempDir(), "a1", WithSecretsTmpfs(true),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	var tries int
	d.mount = func(string, string, string, uintptr, string) error {
		tries++
		return syscall.EPERM
	}
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	td := d.NewTaskDir("web")
	if err := td.Build(); err != nil {
		t.Fatalf("Build with a refused mount: %v", err)
	}
	if tries == 0 {
		t.Fatal("no tmpfs mount was tried")
	}
	if fi, err := os.Lstat(td.SecretsDir); err != nil || fi.Mode() != os.ModeDir|0o700 {
		t.Errorf("secrets mode %v (%v), want drwx------", fi.Mode(), err)
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "not a tmpfs") || !strings.Contains(out, "task=web") {
		t.Errorf("no warning naming the task: %q", out)
	}
	if err := d.Destroy(); err != nil {
		t.Fatal(err)
	}
}

// TestSecretsTmpfsNeverThroughALink: a link planted in place of the
// secrets dir fails the build and nothing is mounted where it points.
func TestSecretsTmpfsNeverThroughALink(t *testing.T) {
	requireRoot(t)
	h := newHost(t)
	d := New(h.allocs, "a1", WithSecretsTmpfs(true))
	t.Cleanup(func() { _ = d.Destroy() })
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	td := d.NewTaskDir("web")
	if err := td.Build(); err != nil {
		t.Fatal(err)
	}
	// The tmpfs goes (as after a reboot) and a task's link takes the
	// directory's place.
	if err := d.Destroy(); err != nil {
		t.Fatal(err)
	}
	d = New(h.allocs, "a1", WithSecretsTmpfs(true))
	if err := d.Build(); err != nil {
		t.Fatal(err)
	}
	td = d.NewTaskDir("web")
	if err := os.MkdirAll(td.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(h.outside, "rootonly"), td.SecretsDir); err != nil {
		t.Fatal(err)
	}
	if err := td.Build(); err == nil {
		t.Error("Build through a planted secrets link succeeded")
	}
	if n := mountsAt(t, filepath.Join(h.outside, "rootonly")); n != 0 {
		t.Errorf("a tmpfs was mounted on the link's target %s", filepath.Join(h.outside, "rootonly"))
	}
	if typ, _ := statfs(t, filepath.Join(h.outside, "rootonly")); typ == tmpfsMagic {
		t.Errorf("the link's target is on a tmpfs")
	}
}
