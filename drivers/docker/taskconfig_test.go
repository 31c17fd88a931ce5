package docker

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

func specConfig(raw string) *drivers.TaskConfig {
	return &drivers.TaskConfig{
		ID:       "a1/web/1",
		Name:     "web",
		AllocID:  "a1",
		JobName:  "example",
		JobID:    "example",
		AllocDir: "/data/a1",
		TaskDir: drivers.TaskDir{
			Dir:        "/data/a1/web",
			LocalDir:   "/data/a1/web/local",
			SecretsDir: "/data/a1/web/secrets",
			SharedDir:  "/data/a1/alloc",
		},
		Env:       map[string]string{"NOMAD_ALLOC_ID": "a1", "NOMAD_TASK_DIR": "/data/a1/web/local", "FOO": "bar"},
		Resources: &drivers.Resources{CPUShares: 500, MemoryMB: 256},
		RawConfig: json.RawMessage(raw),
	}
}

func TestBuildSpec(t *testing.T) {
	enabled := true
	cases := []struct {
		name    string
		raw     string
		plugin  *Config
		res     *drivers.Resources
		check   func(t *testing.T, s *containerCreate)
		wantErr string
	}{
		{
			name: "defaults",
			raw:  `{"image":"busybox","command":"sh","args":["-c","echo ${NOMAD_ALLOC_ID} ${NOMAD_TASK_DIR}"]}`,
			check: func(t *testing.T, s *containerCreate) {
				if !slices.Equal(s.Cmd, []string{"sh", "-c", "echo a1 /local"}) {
					t.Errorf("Cmd = %q", s.Cmd)
				}
				if s.HostConfig.NetworkMode != "default" {
					t.Errorf("NetworkMode = %q", s.HostConfig.NetworkMode)
				}
				wantBinds := []string{"/data/a1/alloc:/alloc", "/data/a1/web/local:/local", "/data/a1/web/secrets:/secrets"}
				if !slices.Equal(s.HostConfig.Binds, wantBinds) {
					t.Errorf("Binds = %q", s.HostConfig.Binds)
				}
				if !slices.Contains(s.Env, "NOMAD_TASK_DIR=/local") || !slices.Contains(s.Env, "FOO=bar") || !slices.Contains(s.Env, "NOMAD_ALLOC_DIR=/alloc") {
					t.Errorf("Env = %q", s.Env)
				}
				if s.HostConfig.Memory != 256<<20 || s.HostConfig.MemorySwap != 256<<20 || s.HostConfig.MemoryReservation != 0 || s.HostConfig.CPUShares != 500 {
					t.Errorf("resources = %+v", s.HostConfig)
				}
				for k, v := range map[string]string{LabelAllocID: "a1", labelNomadAllocID: "a1", labelNomadTaskName: "web", labelNomadJobName: "example", labelTaskID: "a1/web/1"} {
					if s.Labels[k] != v {
						t.Errorf("label %s = %q, want %q", k, s.Labels[k], v)
					}
				}
			},
		},
		{
			name: "memory_max is the limit, memory the reservation",
			raw:  `{"image":"busybox"}`,
			res:  &drivers.Resources{CPUShares: 1, MemoryMB: 64, MemoryMaxMB: 128},
			check: func(t *testing.T, s *containerCreate) {
				hc := s.HostConfig
				if hc.Memory != 128<<20 || hc.MemoryReservation != 64<<20 || hc.CPUShares != 2 {
					t.Errorf("resources = %+v", hc)
				}
			},
		},
		{
			name: "args alone replace CMD; entrypoint, work_dir, labels block, host network",
			raw:  `{"image":"busybox","args":["x"],"entrypoint":["/bin/sh","-c"],"work_dir":"/tmp","network_mode":"host","labels":[{"team":"a"},{"app":"b"}]}`,
			check: func(t *testing.T, s *containerCreate) {
				if !slices.Equal(s.Cmd, []string{"x"}) || !slices.Equal(s.Entrypoint, []string{"/bin/sh", "-c"}) || s.WorkingDir != "/tmp" {
					t.Errorf("spec = %+v", s)
				}
				if s.HostConfig.NetworkMode != "host" || s.Labels["team"] != "a" || s.Labels["app"] != "b" {
					t.Errorf("network %q labels %v", s.HostConfig.NetworkMode, s.Labels)
				}
			},
		},
		{
			name: "user labels cannot override the driver's",
			raw:  `{"image":"busybox","labels":{"io.drover.alloc_id":"other"}}`,
			check: func(t *testing.T, s *containerCreate) {
				if s.Labels[LabelAllocID] != "a1" {
					t.Errorf("alloc label = %q", s.Labels[LabelAllocID])
				}
			},
		},
		{
			name:   "volumes and mounts with volumes enabled",
			raw:    `{"image":"busybox","volumes":["/srv:/srv:ro","local/data:/data"],"mount":[{"type":"tmpfs","target":"/scratch","tmpfs_options":[{"size":1048576}]},{"type":"bind","source":"/etc/hosts","target":"/h","readonly":true}]}`,
			plugin: &Config{Volumes: VolumesConfig{Enabled: &enabled}},
			check: func(t *testing.T, s *containerCreate) {
				binds := s.HostConfig.Binds[3:]
				if !slices.Equal(binds, []string{"/srv:/srv:ro", "/data/a1/web/local/data:/data"}) {
					t.Errorf("Binds = %q", binds)
				}
				m := s.HostConfig.Mounts
				if len(m) != 2 || m[0].Type != "tmpfs" || m[0].TmpfsOptions.SizeBytes != 1<<20 || m[1].Source != "/etc/hosts" || !m[1].ReadOnly {
					t.Errorf("Mounts = %+v", m)
				}
			},
		},
		{name: "missing image", raw: `{"command":"sh"}`, wantErr: `config field "image": required field is missing`},
		{name: "unknown field", raw: `{"image":"busybox","ipc_mode":"host"}`, wantErr: "ipc_mode"},
		{name: "privileged not allowed", raw: `{"image":"busybox","privileged":true}`, wantErr: "allow_privileged"},
		{
			name: "privileged allowed", raw: `{"image":"busybox","privileged":true}`, plugin: &Config{AllowPrivileged: true},
			check: func(t *testing.T, s *containerCreate) {
				if !s.HostConfig.Privileged {
					t.Error("not privileged")
				}
			},
		},
		{name: "bad volume", raw: `{"image":"busybox","volumes":["/srv"]}`, wantErr: "host_path:container_path"},
		{name: "relative container path", raw: `{"image":"busybox","volumes":["local:srv"]}`, wantErr: "must be absolute"},
		{name: "absolute volume by default", raw: `{"image":"busybox","volumes":["/srv:/srv"]}`, wantErr: "volumes { enabled = true }"},
		{name: "escaping volume by default", raw: `{"image":"busybox","volumes":["../../etc:/etc2"]}`, wantErr: "outside the allocation directory"},
		{
			name: "relative volumes by default", raw: `{"image":"busybox","volumes":["local:/l","../alloc/data:/d","/data/a1/web/secrets:/s"]}`,
			check: func(t *testing.T, s *containerCreate) {
				want := []string{"/data/a1/web/local:/l", "/data/a1/alloc/data:/d", "/data/a1/web/secrets:/s"}
				if !slices.Equal(s.HostConfig.Binds[3:], want) {
					t.Errorf("Binds = %q", s.HostConfig.Binds)
				}
			},
		},
		{
			name: "selinuxlabel on the task's binds and volumes", raw: `{"image":"busybox","volumes":["local:/l","local/x:/x:ro"]}`,
			plugin: &Config{Volumes: VolumesConfig{SELinuxLabel: "z"}},
			check: func(t *testing.T, s *containerCreate) {
				want := []string{"/data/a1/alloc:/alloc:z", "/data/a1/web/local:/local:z", "/data/a1/web/secrets:/secrets:z", "/data/a1/web/local:/l:z", "/data/a1/web/local/x:/x:ro,z"}
				if !slices.Equal(s.HostConfig.Binds, want) {
					t.Errorf("Binds = %q", s.HostConfig.Binds)
				}
			},
		},
		{
			name: "plugin logging is the default", raw: `{"image":"busybox"}`,
			check: func(t *testing.T, s *containerCreate) {
				if lc := s.HostConfig.LogConfig; lc.Type != "json-file" || lc.Config["max-file"] != "2" || lc.Config["max-size"] != "2m" {
					t.Errorf("LogConfig = %+v", lc)
				}
			},
		},
		{
			name: "task logging block, old driver name", raw: `{"image":"busybox","logging":[{"driver":"local","config":[{"max-size":"5m"}]}]}`,
			check: func(t *testing.T, s *containerCreate) {
				if lc := s.HostConfig.LogConfig; lc.Type != "local" || lc.Config["max-size"] != "5m" {
					t.Errorf("LogConfig = %+v", lc)
				}
			},
		},
		{
			name: "https image, mounts alias, numbers in ulimit", raw: `{"image":"https://registry.example/app:1","mounts":[{"type":"tmpfs","target":"/t"}],"ulimit":[{"nofile":2048}]}`,
			check: func(t *testing.T, s *containerCreate) {
				if s.Image != "registry.example/app:1" || len(s.HostConfig.Mounts) != 1 || s.HostConfig.Ulimits[0].Soft != 2048 || s.HostConfig.Ulimits[0].Hard != 2048 {
					t.Errorf("image %q mounts %+v ulimits %+v", s.Image, s.HostConfig.Mounts, s.HostConfig.Ulimits)
				}
			},
		},
		{
			name: "memory_hard_limit and cpu_hard_limit", raw: `{"image":"busybox","memory_hard_limit":512,"cpu_hard_limit":true}`,
			check: func(t *testing.T, s *containerCreate) {
				hc := s.HostConfig
				// 500 MHz of a 1000 MHz core, default period.
				if hc.Memory != 512<<20 || hc.MemoryReservation != 256<<20 || hc.CPUPeriod != 100000 || hc.CPUQuota != 50000 {
					t.Errorf("resources = mem %d res %d period %d quota %d", hc.Memory, hc.MemoryReservation, hc.CPUPeriod, hc.CPUQuota)
				}
			},
		},
		{
			name: "pids_limit from the plugin", raw: `{"image":"busybox"}`, plugin: &Config{PidsLimit: 50},
			check: func(t *testing.T, s *containerCreate) {
				if s.HostConfig.PidsLimit == nil || *s.HostConfig.PidsLimit != 50 {
					t.Errorf("PidsLimit = %v", s.HostConfig.PidsLimit)
				}
			},
		},
		{name: "pids_limit above the plugin's", raw: `{"image":"busybox","pids_limit":60}`, plugin: &Config{PidsLimit: 50}, wantErr: "above the docker plugin's pids_limit (50)"},
		{name: "memory_hard_limit below memory", raw: `{"image":"busybox","memory_hard_limit":100}`, wantErr: "memory_hard_limit (100 MB) is below the task's memory (256 MB)"},
		{name: "bad cpu_cfs_period", raw: `{"image":"busybox","cpu_hard_limit":true,"cpu_cfs_period":5}`, wantErr: "cpu_cfs_period 5"},
		{name: "bad dns server", raw: `{"image":"busybox","dns_servers":["dns.example"]}`, wantErr: `dns_servers: "dns.example" is not an IP address`},
		{name: "bad extra host", raw: `{"image":"busybox","extra_hosts":["db"]}`, wantErr: `extra_hosts: "db"`},
		{name: "bad ulimit", raw: `{"image":"busybox","ulimit":{"nofile":"lots"}}`, wantErr: "ulimit nofile"},
		{name: "cap_add outside allow_caps", raw: `{"image":"busybox","cap_add":["sys_admin"]}`, wantErr: "allow_caps"},
		{name: "unknown mount type", raw: `{"image":"busybox","mount":[{"type":"npipe","target":"/v","source":"x"}]}`, wantErr: `mount type "npipe" is not supported: use "volume", "bind" or "tmpfs"`},
		{
			name: "named volume, the default mount type", raw: `{"image":"busybox","mount":[{"target":"/v","source":"cache","volume_options":[{"no_copy":true,"labels":[{"team":"infra"}]}]}]}`,
			check: func(t *testing.T, s *containerCreate) {
				m := s.HostConfig.Mounts
				if len(m) != 1 || m[0].Type != "volume" || m[0].Source != "cache" || m[0].Target != "/v" || m[0].VolumeOptions == nil ||
					!m[0].VolumeOptions.NoCopy || m[0].VolumeOptions.Labels["team"] != "infra" || m[0].VolumeOptions.DriverConfig != nil {
					t.Errorf("Mounts = %+v", m)
				}
			},
		},
		{name: "volume driver_config by default", raw: `{"image":"busybox","mount":[{"type":"volume","target":"/v","source":"x","volume_options":{"driver_config":{"name":"local","options":{"type":"none","o":"bind","device":"/etc"}}}}]}`,
			wantErr: "driver_config needs volumes { enabled = true }"},
		{
			name: "volume driver_config with volumes enabled", raw: `{"image":"busybox","mount":[{"type":"volume","target":"/v","source":"x","readonly":true,"volume_options":[{"driver_config":[{"name":"local","options":[{"type":"tmpfs","device":"tmpfs"}]}]}]}]}`,
			plugin: &Config{Volumes: VolumesConfig{Enabled: &enabled}},
			check: func(t *testing.T, s *containerCreate) {
				m := s.HostConfig.Mounts
				if len(m) != 1 || !m[0].ReadOnly || m[0].VolumeOptions == nil || m[0].VolumeOptions.DriverConfig == nil ||
					m[0].VolumeOptions.DriverConfig.Name != "local" || m[0].VolumeOptions.DriverConfig.Options["device"] != "tmpfs" {
					t.Errorf("Mounts = %+v", m)
				}
			},
		},
		{name: "volume_options on a bind", raw: `{"image":"busybox","mount":[{"type":"bind","target":"/v","source":"local","volume_options":[{"no_copy":true}]}]}`,
			wantErr: `volume_options applies to mounts of type "volume", not "bind"`},
		{name: "tmpfs_options on a volume", raw: `{"image":"busybox","mount":[{"target":"/v","tmpfs_options":[{"size":1}]}]}`,
			wantErr: `tmpfs_options applies to mounts of type "tmpfs", not "volume"`},
		{name: "negative tmpfs size", raw: `{"image":"busybox","mount":[{"type":"tmpfs","target":"/v","tmpfs_options":[{"size":-1}]}]}`,
			wantErr: "must not be negative"},
		{name: "volume_driver by default", raw: `{"image":"busybox","volume_driver":"local","volumes":["data:/data"]}`,
			wantErr: `volume_driver "local" needs volumes { enabled = true }`},
		{
			name: "volume_driver makes volumes entries names", raw: `{"image":"busybox","volume_driver":"local","volumes":["data:/data","/srv:/srv:ro"]}`,
			plugin: &Config{Volumes: VolumesConfig{Enabled: &enabled}},
			check: func(t *testing.T, s *containerCreate) {
				if s.HostConfig.VolumeDriver != "local" || !slices.Equal(s.HostConfig.Binds[3:], []string{"data:/data", "/srv:/srv:ro"}) {
					t.Errorf("VolumeDriver %q Binds %q", s.HostConfig.VolumeDriver, s.HostConfig.Binds)
				}
			},
		},
		{
			name: "bind in the task dir by default, with propagation", raw: `{"image":"busybox","mount":[{"type":"bind","source":"local/conf","target":"/etc/app","readonly":true,"bind_options":[{"propagation":"rslave"}]}]}`,
			check: func(t *testing.T, s *containerCreate) {
				m := s.HostConfig.Mounts
				if len(m) != 1 || m[0].Source != "/data/a1/web/local/conf" || !m[0].ReadOnly || m[0].BindOptions == nil || m[0].BindOptions.Propagation != "rslave" {
					t.Errorf("Mounts = %+v", m)
				}
			},
		},
		{name: "tmpfs with source", raw: `{"image":"busybox","mount":[{"type":"tmpfs","target":"/v","source":"x"}]}`, wantErr: "no source"},
		{name: "bind without source", raw: `{"image":"busybox","mount":[{"type":"bind","target":"/v"}]}`, wantErr: "without a source"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := specConfig(tc.raw)
			if tc.res != nil {
				cfg.Resources = tc.res
			}
			plugin := DefaultConfig()
			if tc.plugin != nil {
				plugin = tc.plugin
				plugin.setDefaults()
			}
			env := containerEnv(cfg.Env)
			conf, err := decodeTaskConfig(cfg, env)
			var spec *containerCreate
			if err == nil {
				spec, err = buildSpec(cfg, conf, env, specInput{plugin: plugin, cpuMHz: 1000})
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, spec)
		})
	}
}

func TestContainerName(t *testing.T) {
	cases := map[string]string{
		"web":      "web-a1",
		"my task!": "my_task_-a1",
		"-x":       "_x-a1",
	}
	for task, want := range cases {
		if got := containerName(task, "a1"); got != want {
			t.Errorf("containerName(%q) = %q, want %q", task, got, want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	t.Setenv("DOCKER_HOST", "")
	c, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != DefaultEndpoint || c.volumesEnabled() || c.AllowPrivileged || c.DefaultNetworkMode != "default" {
		t.Fatalf("defaults = %+v", c)
	}
	c, err = ParseConfig([]byte(`{"allow_privileged":true,"volumes":[{"enabled":true}],"pull_timeout":"1m","default_network_mode":"bridge"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.AllowPrivileged || !c.volumesEnabled() || time.Duration(c.PullTimeout) != time.Minute || c.DefaultNetworkMode != "bridge" {
		t.Fatalf("parsed = %+v", c)
	}
	if _, err := ParseConfig([]byte(`{"volume":{}}`)); err == nil || !strings.Contains(err.Error(), "volume") {
		t.Fatalf("unknown field: err = %v", err)
	}
	if _, err := ParseConfig([]byte(`{"pull_timeout":"soon"}`)); err == nil {
		t.Fatal("bad duration accepted")
	}
}
