package taskenv

import (
	"maps"
	"path"
	"strings"
)

// Filesystem isolations a driver reports (its Capabilities.FSIsolation).
const (
	IsolationNone   = "none"   // the task sees the host's paths (raw_exec)
	IsolationChroot = "chroot" // the task's directory is its root (exec)
	IsolationImage  = "image"  // the task runs in an image (docker)
)

// Paths of a task's directories inside a chroot or an image.
const (
	AllocDirInTask   = "/alloc"
	LocalDirInTask   = "/local"
	SecretsDirInTask = "/secrets"
)

// Dirs are the host paths of a task's directories.
type Dirs struct {
	Alloc   string // <alloc>/alloc, shared by the group's tasks
	Task    string // <alloc>/<task>
	Local   string // <alloc>/<task>/local
	Secrets string // <alloc>/<task>/secrets
}

// ForIsolation returns env (built with the directories' host paths) as a
// task of a driver with the given filesystem isolation sees it. Without
// isolation it is env itself. In a chroot or an image, NOMAD_ALLOC_DIR,
// NOMAD_TASK_DIR and NOMAD_SECRETS_DIR are /alloc, /local and /secrets,
// and every other value that is a path under one of the directories (an
// env block's "${NOMAD_TASK_DIR}/app.conf") is rewritten the same way; in
// a chroot the task directory itself is "/". env is not changed.
func ForIsolation(env map[string]string, isolation string, d Dirs) map[string]string {
	if isolation != IsolationChroot && isolation != IsolationImage {
		return env
	}
	type rewrite struct{ host, inTask string }
	// Deepest directory first: <task>/local wins over <task>.
	rewrites := []rewrite{{d.Local, LocalDirInTask}, {d.Secrets, SecretsDirInTask}, {d.Alloc, AllocDirInTask}}
	if isolation == IsolationChroot {
		rewrites = append(rewrites, rewrite{d.Task, "/"})
	}
	out := maps.Clone(env)
	if out == nil {
		out = make(map[string]string)
	}
	for k, v := range out {
		// A socket address (NOMAD_UNIX_ADDR, unix://<secrets>/api.sock)
		// is rewritten as the path it holds.
		scheme := ""
		if rest, ok := strings.CutPrefix(v, "unix://"); ok {
			scheme, v = "unix://", rest
		}
		for _, r := range rewrites {
			if r.host == "" {
				continue
			}
			host := path.Clean(r.host)
			if v == host {
				out[k] = scheme + r.inTask
				break
			}
			if rest, ok := strings.CutPrefix(v, host+"/"); ok {
				out[k] = scheme + path.Join(r.inTask, rest)
				break
			}
		}
	}
	out[AllocDir] = AllocDirInTask
	out[TaskDir] = LocalDirInTask
	out[SecretsDir] = SecretsDirInTask
	return out
}
