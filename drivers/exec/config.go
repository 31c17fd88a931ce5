package exec

import (
	"errors"
	"maps"
	"path/filepath"
	"strings"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
)

// TaskConfig is exec's config block.
type TaskConfig struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// Options are the driver's plugin options (a later plugin config block).
type Options struct {
	// AllowUser lets a task's "user" choose whom it runs as; otherwise a
	// task that sets one fails to start.
	AllowUser bool
	// DefaultUser is whom tasks run as when they set no user ("nobody").
	DefaultUser string
	// ChrootEnv maps host paths to their place in the task's root; nil
	// means isolation.DefaultChrootEnv. They are bind-mounted read-only.
	ChrootEnv map[string]string
	// NoPivot enters the task's root with chroot instead of pivot_root.
	NoPivot bool
	// CgroupParent is the cgroup task cgroups are created under ("drover").
	CgroupParent string
	// Capabilities tasks may hold; nil means
	// isolation.DefaultCapabilities. The rest leave the bounding set.
	Capabilities []string
	// PidsLimit bounds each task's processes and threads; 0 is no limit.
	PidsLimit int64
	// UserNamespace runs each task in a user namespace of its own where
	// the kernel allows (isolation.NewUserNS): its user maps to itself
	// and root to nobody, so root in a task is not root on the host.
	UserNamespace bool
}

// DefaultOptions returns the options a driver has without a plugin config.
func DefaultOptions() Options {
	return Options{DefaultUser: isolation.DefaultUser, CgroupParent: "drover", UserNamespace: true}
}

// Paths inside the task's root.
const (
	allocDirInRoot   = "/alloc"
	localDirInRoot   = "/local"
	secretsDirInRoot = "/secrets"
)

// decodeConfig decodes and validates cfg's config block and interpolates
// env (the task's environment as seen inside its root) into it.
func decodeConfig(cfg *drivers.TaskConfig, env map[string]string) (*TaskConfig, error) {
	conf := &TaskConfig{}
	if err := cfg.DecodeDriverConfig(conf); err != nil {
		return nil, err
	}
	if conf.Command == "" {
		return nil, errors.New(`missing "command" in the task's config block`)
	}
	conf.Command = taskenv.Interpolate(conf.Command, env, nil, nil)
	for i, a := range conf.Args {
		conf.Args[i] = taskenv.Interpolate(a, env, nil, nil)
	}
	return conf, nil
}

// rootEnv returns the task's environment with the host paths of its
// directories replaced by their place inside the root, and a PATH.
func rootEnv(cfg *drivers.TaskConfig) map[string]string {
	env := maps.Clone(cfg.Env)
	if env == nil {
		env = make(map[string]string)
	}
	// Longest host path first, so that <task>/local wins over <task>.
	type rewrite struct{ host, inRoot string }
	rewrites := []rewrite{
		{cfg.TaskDir.LocalDir, localDirInRoot},
		{cfg.TaskDir.SecretsDir, secretsDirInRoot},
		{cfg.TaskDir.SharedDir, allocDirInRoot},
		{cfg.TaskDir.Dir, "/"},
	}
	for k, v := range env {
		for _, r := range rewrites {
			if r.host == "" {
				continue
			}
			host := filepath.Clean(r.host)
			if v == host {
				env[k] = r.inRoot
				break
			}
			if rest, ok := strings.CutPrefix(v, host+"/"); ok {
				env[k] = filepath.Join(r.inRoot, rest)
				break
			}
		}
	}
	env[taskenv.AllocDir] = allocDirInRoot
	env[taskenv.TaskDir] = localDirInRoot
	env[taskenv.SecretsDir] = secretsDirInRoot
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	return env
}

// envList turns env into KEY=value pairs.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// mounts returns the task's mounts: the chroot env read-only, the alloc
// dir at /alloc, and local and secrets where they do not already lie in
// the task dir.
func mounts(cfg *drivers.TaskConfig, chrootEnv map[string]string) []isolation.Mount {
	if chrootEnv == nil {
		chrootEnv = isolation.DefaultChrootEnv()
	}
	out := isolation.ChrootMounts(chrootEnv)
	if cfg.TaskDir.SharedDir != "" {
		out = append(out, isolation.Mount{Source: cfg.TaskDir.SharedDir, Target: allocDirInRoot})
	}
	for _, m := range []struct{ host, inRoot string }{
		{cfg.TaskDir.LocalDir, localDirInRoot},
		{cfg.TaskDir.SecretsDir, secretsDirInRoot},
	} {
		if m.host != "" && filepath.Clean(m.host) != filepath.Join(cfg.TaskDir.Dir, m.inRoot) {
			out = append(out, isolation.Mount{Source: m.host, Target: m.inRoot})
		}
	}
	return out
}

// cgroupName is the task's cgroup name: "<alloc id>.<task>", kept to
// characters that are safe in a path element.
func cgroupName(cfg *drivers.TaskConfig) string {
	return shim.SafeName(cfg.AllocID + "." + cfg.Name)
}

// resources converts the task's resources to cgroup limits.
func resources(r *drivers.Resources, pidsLimit int64) isolation.Resources {
	out := isolation.Resources{PidsMax: pidsLimit}
	if r != nil {
		out.MemoryBytes = r.MemoryMB << 20
		out.MemoryMaxBytes = r.MemoryMaxMB << 20
		out.CPUShares = r.CPUShares
	}
	return out
}
