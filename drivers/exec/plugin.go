package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/base"
)

// PluginConfig is exec's plugin config block in the agent config:
//
//	plugin "exec" {
//	  config {
//	    allow_user    = false
//	    default_user  = "nobody"
//	    chroot_env    = { "/bin" = "/bin", "/etc" = "/etc" }
//	    pids_limit    = 0
//	    no_pivot_root = false
//	    allow_caps    = ["chown", "kill", ...]
//	    user_namespace = true
//	  }
//	}
//
// Names follow Nomad's exec driver where it has the option (no_pivot_root,
// allow_caps, default_pid_mode, default_ipc_mode) and Nomad's client
// option chroot_env, which drover takes here. user_namespace is drover's
// own (Nomad's exec driver has no user namespaces).
type PluginConfig struct {
	AllowUser      bool              `json:"allow_user"`
	DefaultUser    string            `json:"default_user"`
	ChrootEnv      map[string]string `json:"chroot_env"`
	PidsLimit      int64             `json:"pids_limit"`
	NoPivotRoot    bool              `json:"no_pivot_root"`
	AllowCaps      []string          `json:"allow_caps"`
	DefaultPidMode string            `json:"default_pid_mode"`
	DefaultIpcMode string            `json:"default_ipc_mode"`
	UserNamespace  bool              `json:"user_namespace"`
}

// namespaceModePrivate is the only pid and ipc mode exec supports: every
// task has namespaces of its own.
const namespaceModePrivate = "private"

// PluginConfigSchema describes PluginConfig, with its defaults.
func PluginConfigSchema() *base.Schema {
	return &base.Schema{Fields: []*base.Field{
		{Name: "allow_user", Type: base.TypeBool, Default: json.RawMessage(`false`),
			Description: `let a task's "user" choose whom it runs as; otherwise a task that sets one fails to start`},
		{Name: "default_user", Type: base.TypeString, Default: json.RawMessage(`"` + isolation.DefaultUser + `"`),
			Description: "whom tasks run as when they set no user"},
		{Name: "chroot_env", Type: base.TypeStringMap,
			Description: "host paths (keys) bound read-only at paths of the task's root (values); unset: a default set (/bin, /etc, /lib, /usr, ...)"},
		{Name: "pids_limit", Type: base.TypeInt, Default: json.RawMessage(`0`),
			Description: "most processes and threads per task; 0: no limit"},
		{Name: "no_pivot_root", Type: base.TypeBool, Default: json.RawMessage(`false`),
			Description: "enter the task's root with chroot instead of pivot_root (for a host root on a ramdisk)"},
		{Name: "allow_caps", Type: base.TypeStringList,
			Description: "capabilities tasks may hold; unset: Nomad's exec default set"},
		{Name: "default_pid_mode", Type: base.TypeString, Default: json.RawMessage(`"private"`),
			Description: `pid namespace of tasks: only "private" is supported`},
		{Name: "default_ipc_mode", Type: base.TypeString, Default: json.RawMessage(`"private"`),
			Description: `ipc namespace of tasks: only "private" is supported`},
		{Name: "user_namespace", Type: base.TypeBool, Default: json.RawMessage(`true`),
			Description: "run each task in a user namespace of its own where the kernel allows: its user maps to itself, root to nobody (false: root tasks are the host's root, with the allowed capabilities)"},
	}}
}

// ParsePluginConfig validates exec's plugin config block (JSON; nil or
// empty: none) and returns the driver's Options. Every problem is
// reported, each as a *base.ConfigError naming the plugin and the field.
func ParsePluginConfig(raw json.RawMessage) (Options, error) {
	validated, err := PluginConfigSchema().Validate(Name, raw)
	if err != nil {
		return Options{}, err
	}
	var pc PluginConfig
	if err := (&base.Config{PluginConfig: validated}).DecodePluginConfig(&pc); err != nil {
		return Options{}, &base.ConfigError{Plugin: Name, Err: err}
	}
	return pc.options()
}

// options checks the values the schema cannot and maps them to Options.
func (pc *PluginConfig) options() (Options, error) {
	var errs []error
	fieldErr := func(field, format string, args ...any) {
		errs = append(errs, &base.ConfigError{Plugin: Name, Field: field, Err: fmt.Errorf(format, args...)})
	}
	opts := DefaultOptions()
	opts.AllowUser = pc.AllowUser
	opts.NoPivot = pc.NoPivotRoot
	opts.UserNamespace = pc.UserNamespace
	switch u := pc.DefaultUser; {
	case u == "":
		fieldErr("default_user", "must not be empty")
	case strings.ContainsAny(u, " \t\n:/"):
		fieldErr("default_user", "%q is not a user name", u)
	default:
		opts.DefaultUser = u
	}
	if pc.PidsLimit < 0 {
		fieldErr("pids_limit", "must not be negative (0 is no limit), got %d", pc.PidsLimit)
	}
	opts.PidsLimit = pc.PidsLimit
	if pc.ChrootEnv != nil {
		opts.ChrootEnv = make(map[string]string, len(pc.ChrootEnv))
		for _, src := range slices.Sorted(maps.Keys(pc.ChrootEnv)) {
			dst := pc.ChrootEnv[src]
			if dst == "" {
				dst = src
			}
			switch {
			case !filepath.IsAbs(src):
				fieldErr("chroot_env", "host path %q must be absolute", src)
			case !filepath.IsAbs(dst):
				fieldErr("chroot_env", "path %q (for %s) in the task's root must be absolute", dst, src)
			case filepath.Clean(dst) == "/":
				fieldErr("chroot_env", "%s cannot be bound over the task's root /", src)
			default:
				opts.ChrootEnv[filepath.Clean(src)] = filepath.Clean(dst)
			}
		}
	}
	if pc.AllowCaps != nil {
		caps, err := isolation.ParseCapabilities(pc.AllowCaps)
		if err != nil {
			fieldErr("allow_caps", "%v", err)
		}
		opts.Capabilities = caps
	}
	for _, m := range []struct{ field, value, ns string }{
		{"default_pid_mode", pc.DefaultPidMode, "pid"},
		{"default_ipc_mode", pc.DefaultIpcMode, "ipc"},
	} {
		if m.value != namespaceModePrivate {
			fieldErr(m.field, "%q is not supported: every exec task has a %s namespace of its own (%q)", m.value, m.ns, namespaceModePrivate)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Options{}, err
	}
	return opts, nil
}
