package exec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/base"
)

func TestParsePluginConfig(t *testing.T) {
	def := DefaultOptions()
	cases := []struct {
		name    string
		raw     string
		want    Options
		wantErr []string // each a "config field" the error must name
	}{
		{name: "no block", raw: ``, want: def},
		{name: "empty block", raw: `{}`, want: def},
		{
			name: "every field",
			raw: `{"allow_user": true, "default_user": "daemon", "chroot_env": {"/src": "/dst", "/etc/": ""},
				"pids_limit": 64, "no_pivot_root": true, "allow_caps": ["CAP_KILL", "chown"],
				"default_pid_mode": "private", "default_ipc_mode": "private", "user_namespace": false}`,
			want: Options{AllowUser: true, DefaultUser: "daemon", ChrootEnv: map[string]string{"/src": "/dst", "/etc": "/etc"},
				PidsLimit: 64, NoPivot: true, Capabilities: []string{"kill", "chown"}, CgroupParent: def.CgroupParent},
		},
		{name: "user namespace on by default", raw: `{"user_namespace": true}`, want: def},
		{name: "unknown field", raw: `{"allow_usr": true}`, wantErr: []string{`plugin "exec": config field "allow_usr": unknown field`}},
		{name: "wrong type", raw: `{"allow_user": "yes"}`, wantErr: []string{`config field "allow_user": want bool`}},
		{name: "negative pids_limit", raw: `{"pids_limit": -1}`, wantErr: []string{`config field "pids_limit": must not be negative`}},
		{name: "empty default_user", raw: `{"default_user": ""}`, wantErr: []string{`config field "default_user": must not be empty`}},
		{name: "relative chroot_env", raw: `{"chroot_env": {"bin": "/bin"}}`, wantErr: []string{`config field "chroot_env": host path "bin" must be absolute`}},
		{name: "chroot_env over root", raw: `{"chroot_env": {"/srv": "/"}}`, wantErr: []string{`config field "chroot_env": /srv cannot be bound over`}},
		{name: "unknown capability", raw: `{"allow_caps": ["fly"]}`, wantErr: []string{`config field "allow_caps": unknown capability "fly"`}},
		{name: "host pid mode", raw: `{"default_pid_mode": "host"}`, wantErr: []string{`config field "default_pid_mode": "host" is not supported`}},
		{
			name:    "every problem reported",
			raw:     `{"pids_limit": -1, "default_ipc_mode": "host"}`,
			wantErr: []string{`config field "pids_limit"`, `config field "default_ipc_mode"`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePluginConfig(json.RawMessage(tc.raw))
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, want %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				var ce *base.ConfigError
				if !errors.As(err, &ce) || ce.Plugin != Name {
					t.Errorf("error %v is not a base.ConfigError of plugin %q", err, Name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("options = %+v, want %+v", got, tc.want)
			}
		})
	}
	if err := PluginConfigSchema().Check(); err != nil {
		t.Fatalf("schema: %v", err)
	}
}

// The plugin config reaches the tasks: chroot_env replaces the default
// set of host paths in the task's root.
func TestPluginConfigChrootEnv(t *testing.T) {
	needIsolation(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("shared\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := isolation.DefaultChrootEnv()
	delete(env, "/etc")
	env[dir] = "/data"
	raw, err := json.Marshal(map[string]any{"chroot_env": env, "pids_limit": 32})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := ParsePluginConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	opts.CgroupParent = testCgroupParent
	h := newHarness(t, WithOptions(opts))
	cfg := h.sh(`cat /data/x; test -e /etc/passwd && echo etc || echo no-etc`)
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v: %s", res, stderr(t, cfg))
	}
	if got := strings.TrimSpace(stdout(t, cfg)); got != "shared\nno-etc" {
		t.Fatalf("stdout %q, want the chroot_env mount and no /etc", got)
	}
}
