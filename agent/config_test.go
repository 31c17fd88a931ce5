package agent

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func loadFiles(t *testing.T, base *Config, paths ...string) *Config {
	t.Helper()
	if err := LoadConfigFiles(base, paths); err != nil {
		t.Fatalf("LoadConfigFiles(%v): %v", paths, err)
	}
	return base
}

func pluginJSON(t *testing.T, c *Config, name string) map[string]any {
	t.Helper()
	p := c.Plugins[name]
	if p == nil {
		t.Fatalf("plugin %q missing; have %v", name, c.Plugins)
	}
	var out map[string]any
	if err := json.Unmarshal(p.Config, &out); err != nil {
		t.Fatalf("plugin %q config %s: %v", name, p.Config, err)
	}
	return out
}

func dur(d time.Duration) *time.Duration { return &d }

func TestConfigFileEveryKey(t *testing.T) {
	c := loadFiles(t, DefaultConfig(), "testdata/config/full.hcl")
	want := DefaultConfig()
	want.NodeName, want.Region, want.Datacenter = "node-a", "eu", "dc2"
	want.DataDir, want.PluginDir, want.BindAddr, want.LogLevel = "/var/lib/drover", "/var/lib/drover/plugins", "0.0.0.0", "debug"
	want.HTTPPort, want.RPCPort = 5646, 5647
	want.Addresses = Addresses{HTTP: "127.0.0.1", RPC: "10.0.0.5"}
	noSchedulers := 0
	want.Server = ServerConfig{Enabled: true, BootstrapExpect: 1, HeartbeatGrace: 15 * time.Second, MinHeartbeatTTL: 20 * time.Second,
		NumSchedulers: &noSchedulers, JobMaxCount: 2500, EvalNackTimeout: 90 * time.Second}
	want.Client = ClientConfig{
		Enabled: true, Servers: []string{"10.0.0.1:4647", "10.0.0.2:4647"}, NodeClass: "batch",
		Meta: map[string]string{"rack": "r1", "team": "infra"}, AllocDir: "/srv/allocs",
		Reserved:       ReservedConfig{CPU: 500, MemoryMB: 256, DiskMB: 1024, ReservedPorts: "22,8500-8600"},
		GC:             ClientGCConfig{Interval: 2 * time.Minute, MaxAllocs: 10, DiskUsageThreshold: 90, InodeUsageThreshold: 75.5},
		MinDynamicPort: 21000, MaxDynamicPort: 22000,
		HostNetworks: map[string]*HostNetworkConfig{
			"public": {Name: "public", CIDR: "203.0.113.0/24", ReservedPorts: "22"},
			"vpn":    {Name: "vpn", Interface: "tailscale0"},
		},
		Artifact: ArtifactConfig{HTTPReadTimeout: 10 * time.Minute, HTTPMaxSize: 2 << 30, GitTimeout: 5 * time.Minute,
			DecompressionFileCountLimit: 100, DecompressionSizeLimit: 1_000_000_000, DisableFilesystemIsolation: true},
		Template: TemplateConfig{FunctionDenylist: []string{"plugin", "writeToFile", "sprig_*"}, DisableFileSandbox: true,
			BlockQueryWait: 2 * time.Minute, WaitMin: dur(2 * time.Second), WaitMax: dur(10 * time.Second), WaitBoundsMax: dur(time.Minute),
			NomadRetryAttempts: 5, NomadRetryBackoff: time.Second, NomadRetryMaxBackoff: 30 * time.Second},
	}
	plugins := c.Plugins
	c.Plugins, want.Plugins = nil, nil
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("config =\n%+v\nwant\n%+v", c, want)
	}
	c.Plugins = plugins
	if got := pluginJSON(t, c, "raw_exec"); got["enabled"] != true {
		t.Errorf("raw_exec config = %v", got)
	}
	docker := pluginJSON(t, c, "docker")
	wantDocker := map[string]any{
		"allow_privileged": false,
		"volumes":          []any{map[string]any{"enabled": true}},
		"extra_labels":     []any{"job_name", "task_name"},
	}
	if !reflect.DeepEqual(docker, wantDocker) {
		t.Errorf("docker config = %v, want %v", docker, wantDocker)
	}
	if got := string(c.Plugins["nvidia"].Config); got != "{}" {
		t.Errorf("nvidia config = %s, want {}", got)
	}
	if on, _ := c.pluginEnabled("raw_exec", true); !on {
		t.Error("raw_exec not enabled")
	}
}

func TestConfigFileJSON(t *testing.T) {
	c := loadFiles(t, DefaultConfig(), "testdata/config/full.json")
	if c.NodeName != "node-j" || c.DataDir != "/data" || c.HTTPPort != 7646 || !c.Server.Enabled || !c.Client.Enabled {
		t.Fatalf("config = %+v", c)
	}
	if c.Client.Meta["k"] != "v" || c.Client.Reserved.CPU != 10 {
		t.Fatalf("client = %+v", c.Client)
	}
	if got := pluginJSON(t, c, "raw_exec"); got["enabled"] != true || got["no_cgroups"] != true {
		t.Fatalf("raw_exec = %v", got)
	}
}

func TestConfigMergeOrder(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		check func(t *testing.T, c *Config)
	}{
		{
			name:  "directory in lexical order, later wins, maps merge",
			paths: []string{"testdata/config/dir"},
			check: func(t *testing.T, c *Config) {
				if c.DataDir != "/base" || c.LogLevel != "warn" {
					t.Errorf("data_dir, log_level = %q, %q", c.DataDir, c.LogLevel)
				}
				if !reflect.DeepEqual(c.Client.Meta, map[string]string{"a": "1", "b": "2"}) {
					t.Errorf("meta = %v", c.Client.Meta)
				}
				if !reflect.DeepEqual(c.Client.Servers, []string{"a:4647"}) || !c.Client.Enabled {
					t.Errorf("client = %+v", c.Client)
				}
				if on, _ := c.pluginEnabled("raw_exec", true); !on {
					t.Error("the later file's raw_exec block does not win")
				}
			},
		},
		{
			name:  "file after directory",
			paths: []string{"testdata/config/dir", "testdata/config/full.hcl"},
			check: func(t *testing.T, c *Config) {
				if c.DataDir != "/var/lib/drover" || c.LogLevel != "debug" || len(c.Client.Servers) != 2 {
					t.Errorf("config = %+v", c)
				}
				if c.Client.Meta["a"] != "1" || c.Client.Meta["rack"] != "r1" {
					t.Errorf("meta = %v", c.Client.Meta)
				}
			},
		},
		{
			name:  "directory after file",
			paths: []string{"testdata/config/full.hcl", "testdata/config/dir"},
			check: func(t *testing.T, c *Config) {
				if c.DataDir != "/base" || c.LogLevel != "warn" || !reflect.DeepEqual(c.Client.Servers, []string{"a:4647"}) {
					t.Errorf("config = %+v", c)
				}
				if c.HTTPPort != 5646 || c.Plugins["docker"] == nil {
					t.Errorf("what only the first file sets is lost: %+v", c)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, loadFiles(t, DefaultConfig(), tc.paths...))
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		src  string
		want []string
	}{
		{"unknown top-level key", "a.hcl", "data_dir = \"/x\"\nbogus = 1\n", []string{"a.hcl:2:1:", `"bogus"`}},
		{"unknown key in a block", "a.hcl", "client {\n  enabled = true\n  srevers = [\"x\"]\n}\n", []string{"a.hcl:3:3:", `"srevers"`}},
		{"unknown block", "a.hcl", "telemetri {\n}\n", []string{"a.hcl:1:1:", `"telemetri"`, `did you mean "telemetry"?`}},
		{"wrong type", "a.hcl", "ports {\n  http = \"high\"\n}\n", []string{"a.hcl:2:10:", "number"}},
		{"syntax error", "a.hcl", "server {\n  enabled = \n", []string{"a.hcl:"}},
		{"bad duration", "a.hcl", "client {\n  gc_interval = \"often\"\n}\n", []string{"a.hcl", "client.gc_interval", `"often"`}},
		{"meta not a string", "a.hcl", "client {\n  meta {\n    a = [1]\n  }\n}\n", []string{"a.hcl:3:"}},
		{"plugin without name", "a.hcl", "plugin {\n}\n", []string{"a.hcl:1:"}},
		{"plugin twice", "a.hcl", "plugin \"x\" {}\nplugin \"x\" {}\n", []string{"a.hcl", `plugin "x" is configured twice`}},
		{"host_network twice", "a.hcl", "client {\n  host_network \"x\" {\n    cidr = \"10.0.0.0/8\"\n  }\n  host_network \"x\" {\n    cidr = \"10.0.0.0/8\"\n  }\n}\n", []string{"a.hcl:5:", `host_network "x" is defined twice`}},
		{"host_network without name", "a.hcl", "client {\n  host_network {\n    cidr = \"10.0.0.0/8\"\n  }\n}\n", []string{"a.hcl:2:", "host_network needs a name"}},
		{"unknown key in host_network", "a.hcl", "client {\n  host_network \"x\" {\n    cdir = \"10.0.0.0/8\"\n  }\n}\n", []string{"a.hcl:3:5:", `"cdir"`}},
		{"unknown key in a plugin block", "a.hcl", "plugin \"x\" {\n  enabled = true\n}\n", []string{"a.hcl:2:3:", `"enabled"`}},
		{"unknown JSON key", "a.json", "{\n  \"data_dir\": \"/x\",\n  \"bogus\": 1\n}\n", []string{"a.json:3:3:", `"bogus"`}},
		{"JSON syntax error", "a.json", "{\"data_dir\": }", []string{"a.json:1:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.file, []byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	base := func(mod func(c *Config)) *Config {
		c := DefaultConfig()
		c.DataDir = "/data"
		c.Server.Enabled = true
		mod(c)
		return c
	}
	tests := []struct {
		name string
		cfg  *Config
		want string // "" for valid
	}{
		{"server", base(func(*Config) {}), ""},
		{"bootstrap_expect 1", base(func(c *Config) { c.Server.BootstrapExpect = 1 }), ""},
		{"bootstrap_expect 3", base(func(c *Config) { c.Server.BootstrapExpect = 3 }), ""},
		{"bootstrap_expect 3 in dev mode", base(func(c *Config) { c.DevMode, c.Server.BootstrapExpect = true, 3 }), "-dev runs one server"},
		{"raft_multiplier 11", base(func(c *Config) { c.Server.RaftMultiplier = 11 }), "raft_multiplier = 11"},
		{"recover on a client", base(func(c *Config) {
			c.Server.Enabled, c.Client.Enabled, c.Client.Servers, c.Server.Recover = false, true, []string{"s:1"}, true
		}), "-recover applies to a server"},
		{"num_schedulers -1", base(func(c *Config) { n := -1; c.Server.NumSchedulers = &n }), "num_schedulers = -1"},
		{"job_max_count -1", base(func(c *Config) { c.Server.JobMaxCount = -1 }), "job_max_count = -1"},
		{"nothing enabled", base(func(c *Config) { c.Server.Enabled = false }), "must run a server, a client or both"},
		{"no data_dir", base(func(c *Config) { c.DataDir = "" }), "data_dir is required"},
		{"dev without data_dir", base(func(c *Config) { c.DataDir = ""; c.DevMode = true }), ""},
		{"client-only without servers", base(func(c *Config) { c.Server.Enabled = false; c.Client.Enabled = true }), "needs the servers' addresses"},
		{"client-only with servers", base(func(c *Config) {
			c.Server.Enabled = false
			c.Client.Enabled = true
			c.Client.Servers = []string{"s:4647"}
		}), ""},
		{"bad port", base(func(c *Config) { c.RPCPort = 70000 }), "ports.rpc = 70000"},
		{"bad log level", base(func(c *Config) { c.LogLevel = "loud" }), `"loud" is invalid`},
		{"bad gc threshold", base(func(c *Config) { c.Client.GC.DiskUsageThreshold = 120 }), "percentages"},
		{"state_dir elsewhere", base(func(c *Config) { c.Client.Enabled = true; c.Client.StateDir = "/other" }), "state_dir"},
		{"state_dir default", base(func(c *Config) { c.Client.Enabled = true; c.Client.StateDir = "/data/client" }), ""},
		{"reserved_ports", base(func(c *Config) { c.Client.Reserved.ReservedPorts = "22, 80,8500-8600" }), ""},
		{"bad reserved_ports", base(func(c *Config) { c.Client.Reserved.ReservedPorts = "22,ssh" }), `client.reserved.reserved_ports = "22,ssh": "ssh" is not a port number`},
		{"reserved port out of range", base(func(c *Config) { c.Client.Reserved.ReservedPorts = "70000" }), "port 70000 is out of range 1-65535"},
		{"dynamic range", base(func(c *Config) { c.Client.MinDynamicPort, c.Client.MaxDynamicPort = 30000, 30010 }), ""},
		{"empty dynamic range", base(func(c *Config) { c.Client.MinDynamicPort, c.Client.MaxDynamicPort = 30010, 30000 }), "dynamic port range 30010-30000 is empty"},
		{"min above the default max", base(func(c *Config) { c.Client.MinDynamicPort = 40000 }), "dynamic port range 40000-32000 is empty"},
		{"max_dynamic_port out of range", base(func(c *Config) { c.Client.MaxDynamicPort = 70000 }), "client.max_dynamic_port = 70000 is out of range"},
		{"host_network without cidr or interface", base(func(c *Config) {
			c.Client.HostNetworks = map[string]*HostNetworkConfig{"x": {Name: "x"}}
		}), `client host_network "x" selects no address`},
		{"host_network bad cidr", base(func(c *Config) {
			c.Client.HostNetworks = map[string]*HostNetworkConfig{"x": {Name: "x", CIDR: "10.0.0.1"}}
		}), `cidr "10.0.0.1" is not a network`},
		{"host_network bad reserved_ports", base(func(c *Config) {
			c.Client.HostNetworks = map[string]*HostNetworkConfig{"x": {Name: "x", Interface: "eth0", ReservedPorts: "9-1"}}
		}), `client host_network "x": reserved_ports = "9-1"`},
		{"host_network named default", base(func(c *Config) {
			c.Client.HostNetworks = map[string]*HostNetworkConfig{"default": {Name: "default", Interface: "eth0"}}
		}), "names the node's own address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	c := base(func(c *Config) { c.Client.Enabled = true })
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Client.AllocDir != "/data/alloc" || c.Client.StateDir != "/data/client" {
		t.Errorf("derived dirs = %q, %q", c.Client.AllocDir, c.Client.StateDir)
	}
}

func TestParseFlagsMerge(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c *Config)
	}{
		{
			name: "flags win over the file",
			args: []string{"-config", "testdata/config/full.hcl", "-data-dir", "/flag", "-log-level", "warn", "-servers", "x:1, y:2", "-node", "flagged", "-bootstrap-expect", "1"},
			check: func(t *testing.T, c *Config) {
				if c.DataDir != "/flag" || c.LogLevel != "warn" || c.NodeName != "flagged" || c.Region != "eu" {
					t.Errorf("config = %+v", c)
				}
				if !reflect.DeepEqual(c.Client.Servers, []string{"x:1", "y:2"}) {
					t.Errorf("servers = %v", c.Client.Servers)
				}
				if c.HTTPPort != 5646 {
					t.Errorf("an unset flag overrode the file: http port %d", c.HTTPPort)
				}
			},
		},
		{
			name: "-server and -client",
			args: []string{"-server", "-client", "-data-dir", "/d", "-plugin-dir", "/p"},
			check: func(t *testing.T, c *Config) {
				if !c.Server.Enabled || !c.Client.Enabled || c.PluginDir != "/p" || c.DevMode {
					t.Errorf("config = %+v", c)
				}
			},
		},
		{
			name: "-dev with -config merges the file into the dev config",
			args: []string{"-dev", "-config", "testdata/config/extra.hcl"},
			check: func(t *testing.T, c *Config) {
				if !c.DevMode || !c.Server.Enabled || !c.Client.Enabled {
					t.Errorf("not a dev config: %+v", c)
				}
				if got := pluginJSON(t, c, "fake_device"); got["count"] != float64(2) {
					t.Errorf("fake_device = %v", got)
				}
				if c.Client.Meta["gpu"] != "fake" {
					t.Errorf("meta = %v", c.Client.Meta)
				}
			},
		},
		{
			name: "two -config flags, later wins",
			args: []string{"-config", "testdata/config/full.hcl", "-config", "testdata/config/full.json"},
			check: func(t *testing.T, c *Config) {
				if c.NodeName != "node-j" || c.DataDir != "/data" || c.HTTPPort != 7646 || c.Region != "eu" {
					t.Errorf("config = %+v", c)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			cmd, err := parseFlags(tc.args, &stdout, &stderr)
			if err != nil {
				t.Fatalf("parseFlags: %v (%s)", err, stderr.String())
			}
			tc.check(t, cmd.cfg)
		})
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
