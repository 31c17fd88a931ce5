package exec

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/drover-io/drover/drivers/shared/beneath"
	"github.com/drover-io/drover/plugins/drivers"
)

// TestChownSecretsRefusesALink: a link planted in place of the secrets
// dir is not followed: the host directory it names keeps its owner.
func TestChownSecretsRefusesALink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	task := filepath.Join(dir, "web")
	for _, d := range []string{host, filepath.Join(task, "real")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(host, filepath.Join(task, "secrets")); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) uint32 {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Uid
	}
	cfg := &drivers.TaskConfig{TaskDir: drivers.TaskDir{SecretsDir: filepath.Join(task, "secrets")}}
	if err := chownSecrets(cfg, 65534, 65534); !errors.Is(err, beneath.ErrSymlink) {
		t.Fatalf("chownSecrets = %v, want ErrSymlink", err)
	}
	if owner(host) != 0 {
		t.Fatal("the host dir was given to the task's user")
	}
	cfg.TaskDir.SecretsDir = filepath.Join(task, "real")
	if err := chownSecrets(cfg, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if owner(cfg.TaskDir.SecretsDir) != 65534 {
		t.Fatal("the secrets dir was not given to the task's user")
	}
}
