package isolation

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// Spec is what the init stage sets up and runs. It travels to the init
// stage as JSON through a pipe.
type Spec struct {
	// Path is the command to run, seen from inside the root: an absolute
	// path, a path relative to Dir, or a name looked up in Env's PATH.
	Path string `json:"path"`
	// Args are its arguments, without argv[0].
	Args []string `json:"args,omitempty"`
	// Env is its complete environment ("KEY=value").
	Env []string `json:"env,omitempty"`
	// Dir is its working directory inside the root; empty is "/".
	Dir string `json:"dir,omitempty"`

	// RootDir is the host directory that becomes the task's "/". Mount
	// points for Mounts, /proc and /dev are created in it.
	RootDir string `json:"root_dir"`
	// Mounts are bind mounts into RootDir, made inside the task's mount
	// namespace only. A source that is a symlink is recreated as the same
	// symlink instead (so /bin -> usr/bin stays a link); a source that
	// does not exist is skipped when Optional.
	Mounts []Mount `json:"mounts,omitempty"`
	// Devices are host device nodes bound into the task's /dev (after
	// its tmpfs is mounted), as device plugins ask for them.
	Devices []Mount `json:"devices,omitempty"`
	// NoPivot uses chroot(2) instead of pivot_root(2). pivot_root detaches
	// the host's mounts from the task entirely; chroot works where
	// pivot_root cannot (a root on a ramfs).
	NoPivot bool `json:"no_pivot,omitempty"`

	// UID and GID the command runs as, with supplementary Groups.
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`

	// UserNS, when set, runs the task in a user namespace of its own
	// (NewUserNS): UID, GID and Groups are IDs inside it, and must be
	// mapped. Start hands the init stage detached copies of the root and
	// of every mount's source (it could neither reach host paths only
	// the host's root may nor bind the host's mounts) and creates the
	// root's mount points, which are the host root's.
	UserNS *UserNS `json:"user_ns,omitempty"`
	// RootFD is set by Start for the init stage of a task with a UserNS:
	// the descriptor of a detached copy of RootDir's mount tree.
	RootFD int `json:"root_fd,omitempty"`
	// InitFD is set by Start likewise: the descriptor of the init stage's
	// own binary, which it was executed through.
	InitFD int `json:"init_fd,omitempty"`

	// Capabilities the task may hold (see DefaultCapabilities, which nil
	// means); all others are dropped from its bounding set.
	Capabilities []string `json:"capabilities,omitempty"`

	// Hostname is set in the task's uts namespace when not empty.
	Hostname string `json:"hostname,omitempty"`
	// NetworkIsolation puts the task in a new network namespace whose
	// only device is loopback, brought up by the init stage; by default
	// the task shares the host's network.
	NetworkIsolation bool `json:"network_isolation,omitempty"`

	// DieWithParent has the kernel SIGKILL the task (and with it, being
	// PID 1, its whole pid namespace) when the process that called Start
	// dies, as the shim wants: a task must not outlive its supervisor.
	// The init stage arms it itself (prctl PR_SET_PDEATHSIG), again after
	// dropping privileges, which clears it; the parent must call Start
	// from a thread that lives as long as it (runtime.LockOSThread), as
	// the signal follows the thread that forked.
	DieWithParent bool `json:"die_with_parent,omitempty"`
}

// Mount is a bind mount of a host path into the task's root.
type Mount struct {
	// Source is the host path.
	Source string `json:"source"`
	// Target is the path inside the root.
	Target string `json:"target"`
	// ReadOnly remounts the bind read-only.
	ReadOnly bool `json:"read_only,omitempty"`
	// Optional skips a Source that does not exist.
	Optional bool `json:"optional,omitempty"`

	// FD and Link are set by Start for the init stage of a task with a
	// UserNS: the descriptor of a detached copy of Source (read-only
	// already when ReadOnly), or, for a Source that is a symbolic link,
	// its target.
	FD   int    `json:"fd,omitempty"`
	Link string `json:"link,omitempty"`
}

// DefaultChrootEnv maps the host paths a task's root gets by default to
// their place inside it, as Nomad's chroot_env default.
func DefaultChrootEnv() map[string]string {
	return map[string]string{
		"/bin":            "/bin",
		"/etc":            "/etc",
		"/lib":            "/lib",
		"/lib32":          "/lib32",
		"/lib64":          "/lib64",
		"/sbin":           "/sbin",
		"/usr":            "/usr",
		"/run/resolvconf": "/run/resolvconf",
	}
}

// ChrootMounts turns a chroot_env map (host path -> path in the root) into
// read-only, optional mounts sorted by target, so that a parent is
// mounted before what lies below it.
func ChrootMounts(env map[string]string) []Mount {
	out := make([]Mount, 0, len(env))
	for src, dst := range env {
		if dst == "" {
			dst = src
		}
		out = append(out, Mount{Source: src, Target: dst, ReadOnly: true, Optional: true})
	}
	sortMounts(out)
	return out
}

// sortMounts orders mounts by target depth then name.
func sortMounts(m []Mount) {
	slices.SortFunc(m, func(a, b Mount) int {
		if c := cmp.Compare(depth(a.Target), depth(b.Target)); c != 0 {
			return c
		}
		return cmp.Compare(a.Target, b.Target)
	})
}

func depth(p string) int {
	n := 0
	for _, c := range filepath.Clean(p) {
		if c == '/' {
			n++
		}
	}
	return n
}

// validate checks the spec before anything is started.
func (s *Spec) validate() error {
	var errs []error
	if s.Path == "" {
		errs = append(errs, errors.New("no command"))
	}
	if s.RootDir == "" || !filepath.IsAbs(s.RootDir) {
		errs = append(errs, fmt.Errorf("root directory %q must be an absolute path", s.RootDir))
	}
	if _, err := ParseCapabilities(s.Capabilities); err != nil {
		errs = append(errs, err)
	}
	if s.UserNS != nil {
		if err := s.UserNS.validate(s.UID, s.GID, s.Groups); err != nil {
			errs = append(errs, err)
		}
	}
	for _, m := range s.Mounts {
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) {
			errs = append(errs, fmt.Errorf("mount %s -> %s: both paths must be absolute", m.Source, m.Target))
		}
		if filepath.Clean(m.Target) == "/" {
			errs = append(errs, fmt.Errorf("mount %s: cannot mount over the root", m.Source))
		}
	}
	return errors.Join(errs...)
}
