package exec

import (
	"reflect"
	"testing"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

func testTaskDirs() *drivers.TaskConfig {
	return &drivers.TaskConfig{
		Name:    "web",
		AllocID: "a1",
		TaskDir: drivers.TaskDir{
			Dir:        "/data/alloc/a1/web",
			LocalDir:   "/data/alloc/a1/web/local",
			SecretsDir: "/data/alloc/a1/web/secrets",
			SharedDir:  "/data/alloc/a1/alloc",
		},
	}
}

func TestRootEnv(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{
			name: "task paths seen from inside the root",
			env: map[string]string{
				"NOMAD_TASK_DIR": "/data/alloc/a1/web/local", "NOMAD_ALLOC_DIR": "/data/alloc/a1/alloc",
				"NOMAD_SECRETS_DIR": "/data/alloc/a1/web/secrets", "CONF": "/data/alloc/a1/web/local/app.conf",
				"TMP": "/data/alloc/a1/web/tmp", "LOGS": "/data/alloc/a1/alloc/logs", "OTHER": "/data/alloc/a1/webx",
				"PATH": "/bin",
			},
			want: map[string]string{
				"NOMAD_TASK_DIR": "/local", "NOMAD_ALLOC_DIR": "/alloc", "NOMAD_SECRETS_DIR": "/secrets",
				"CONF": "/local/app.conf", "TMP": "/tmp", "LOGS": "/alloc/logs", "OTHER": "/data/alloc/a1/webx",
				"PATH": "/bin",
			},
		},
		{
			name: "defaults",
			env:  nil,
			want: map[string]string{
				"NOMAD_TASK_DIR": "/local", "NOMAD_ALLOC_DIR": "/alloc", "NOMAD_SECRETS_DIR": "/secrets",
				"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testTaskDirs()
			cfg.Env = tc.env
			if got := rootEnv(cfg); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("rootEnv = %v, want %v", got, tc.want)
			}
			if tc.env != nil && tc.env["CONF"] != "/data/alloc/a1/web/local/app.conf" {
				t.Fatal("rootEnv changed the task's env")
			}
		})
	}
}

func TestMounts(t *testing.T) {
	cfg := testTaskDirs()
	got := mounts(cfg, map[string]string{"/usr": "/usr", "/etc/ssl": "", "/opt/tools": "/tools"})
	want := []isolation.Mount{
		{Source: "/opt/tools", Target: "/tools", ReadOnly: true, Optional: true},
		{Source: "/usr", Target: "/usr", ReadOnly: true, Optional: true},
		{Source: "/etc/ssl", Target: "/etc/ssl", ReadOnly: true, Optional: true},
		{Source: "/data/alloc/a1/alloc", Target: "/alloc"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mounts = %+v\nwant %+v", got, want)
	}

	// local and secrets elsewhere than in the task dir are bound in.
	cfg.TaskDir.LocalDir = "/elsewhere/local"
	got = mounts(cfg, map[string]string{})
	want = []isolation.Mount{
		{Source: "/data/alloc/a1/alloc", Target: "/alloc"},
		{Source: "/elsewhere/local", Target: "/local"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mounts = %+v\nwant %+v", got, want)
	}
	if len(mounts(testTaskDirs(), nil)) != len(isolation.DefaultChrootEnv())+1 {
		t.Fatal("nil chroot env is not the default")
	}
}

func TestCgroupNameAndResources(t *testing.T) {
	cases := []struct{ alloc, task, want string }{
		{"4f1c-9a", "web", "4f1c-9a.web"},
		{"a1", "../../etc", "a1..._.._etc"},
		{"", "", "_."},
	}
	for _, tc := range cases {
		if got := cgroupName(&drivers.TaskConfig{AllocID: tc.alloc, Name: tc.task}); got != tc.want {
			t.Errorf("cgroupName(%q, %q) = %q, want %q", tc.alloc, tc.task, got, tc.want)
		}
	}
	got := resources(&drivers.Resources{CPUShares: 500, MemoryMB: 256, MemoryMaxMB: 512}, 100)
	want := isolation.Resources{CPUShares: 500, MemoryBytes: 256 << 20, MemoryMaxBytes: 512 << 20, PidsMax: 100}
	if got != want {
		t.Fatalf("resources = %+v, want %+v", got, want)
	}
	if got := resources(nil, 0); got != (isolation.Resources{}) {
		t.Fatalf("resources(nil) = %+v", got)
	}
}
