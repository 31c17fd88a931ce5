package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

// The exec plugin block, as an agent config file writes it, configures
// the exec driver; invalid fields fail with the plugin and field named.
func TestExecPluginConfig(t *testing.T) {
	tests := []struct {
		name, src string
		wantErr   string
	}{
		{name: "no block", src: ``},
		{name: "every field", src: `plugin "exec" {
  config {
    allow_user       = false
    chroot_env       = { "/bin" = "/bin", "/usr" = "/usr", "/srv/data" = "/data" }
    pids_limit       = 0
    no_pivot_root    = false
    default_user     = "nobody"
    allow_caps       = ["kill", "chown"]
    default_pid_mode = "private"
    default_ipc_mode = "private"
  }
}`},
		{name: "unknown field", src: execBlock(`allow_users = true`),
			wantErr: `plugin "exec": config field "allow_users": unknown field`},
		{name: "wrong type", src: execBlock(`pids_limit = "many"`),
			wantErr: `plugin "exec": config field "pids_limit": want int`},
		{name: "negative pids_limit", src: execBlock(`pids_limit = -5`),
			wantErr: `plugin "exec": config field "pids_limit": must not be negative`},
		{name: "relative chroot_env", src: execBlock(`chroot_env = { "bin" = "/bin" }`),
			wantErr: `plugin "exec": config field "chroot_env": host path "bin" must be absolute`},
		{name: "unknown capability", src: execBlock(`allow_caps = ["sys_everything"]`),
			wantErr: `plugin "exec": config field "allow_caps": unknown capability`},
		{name: "host pid mode", src: execBlock(`default_pid_mode = "host"`),
			wantErr: `plugin "exec": config field "default_pid_mode": "host" is not supported`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := execFromConfigFile(t, tc.src)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("factory error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// A task that sets a user is refused unless the exec block allows it.
func TestExecPluginAllowUser(t *testing.T) {
	const refused = "enable allow_user in the driver's plugin config"
	tests := []struct {
		name, src, user string
		wantErr         string // in StartTask's error
		notErr          string // not in it
	}{
		{name: "default refuses a user", user: "daemon", wantErr: refused},
		{name: "allow_user = false refuses a user", src: execBlock(`allow_user = false`),
			user: "daemon", wantErr: refused},
		// The user is then looked up (and this one does not exist): the
		// start fails before any process runs, but not for allow_user.
		{name: "allow_user = true lets the task choose", src: execBlock(`allow_user = true`),
			user: "no-such-user-drover", wantErr: "no-such-user-drover", notErr: refused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := execFromConfigFile(t, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			cfg := &drivers.TaskConfig{
				ID: "a1/web/1", Name: "web", AllocID: "a1", User: tc.user, AllocDir: dir,
				TaskDir:   drivers.TaskDir{Dir: filepath.Join(dir, "web")},
				RawConfig: json.RawMessage(`{"command":"/bin/true"}`),
			}
			_, err = d.StartTask(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("StartTask error = %v, want %q", err, tc.wantErr)
			}
			if tc.notErr != "" && strings.Contains(err.Error(), tc.notErr) {
				t.Fatalf("StartTask error = %v, should not mention %q", err, tc.notErr)
			}
		})
	}
}

// execBlock is an agent config file with an exec plugin block of body.
func execBlock(body string) string {
	return "plugin \"exec\" {\n  config {\n    " + body + "\n  }\n}\n"
}

// execFromConfigFile builds the exec driver as an agent whose config
// file is src would.
func execFromConfigFile(t *testing.T, src string) (drivers.DriverPlugin, error) {
	t.Helper()
	pf, err := parseConfig("agent.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	for name, raw := range pf.plugins {
		if cfg.Plugins == nil {
			cfg.Plugins = map[string]*PluginConfig{}
		}
		cfg.Plugins[name] = &PluginConfig{Name: name, Config: raw}
	}
	dm, err := driverManagerConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dm.BuiltIn["exec"](slog.New(slog.DiscardHandler), dm.PluginConfigs["exec"])
}
