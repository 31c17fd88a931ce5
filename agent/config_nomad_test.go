package agent

import (
	"github.com/drover-io/drover/agent/telemetry"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
)

// warningKeys returns the keys of ws, sorted.
func warningKeys(ws []ConfigWarning) []string {
	keys := make([]string, 0, len(ws))
	for _, w := range ws {
		keys = append(keys, w.Key)
	}
	slices.Sort(keys)
	return keys
}

// nomadAgentWarnings are the settings of testdata/config/nomad/agent.hcl
// that drover ignores: one warning each.
var nomadAgentWarnings = []string{
	"audit",
	"client.chroot_env", "client.drain_on_shutdown",
	"client.max_kill_timeout", "client.network_speed", "client.no_host_uuid",
	"client.options.docker.privileged.enabled", "client.options.fingerprint.network.disallow_link_local",
	"client.server_join.retry_join",
	"consul", "http_api_response_headers", "keyring", "limits", "plugin.args",
	"reporting", "rpc", "sentinel",
	"server.default_scheduler_config", "server.enabled_schedulers",
	"server.license_path", "server.plan_rejection_tracker",
	"server.raft_protocol",
	"ui.consul", "vault",
}

func TestNomadAgentConfigFile(t *testing.T) {
	c := loadFiles(t, DefaultConfig(), "testdata/config/nomad/agent.hcl")
	if got := warningKeys(c.Warnings); !reflect.DeepEqual(got, nomadAgentWarnings) {
		t.Errorf("warnings:\n got %q\nwant %q", got, nomadAgentWarnings)
	}
	for _, w := range c.Warnings {
		if !strings.HasPrefix(w.Where, "testdata/config/nomad/agent.hcl:") || w.Reason == "" {
			t.Errorf("warning %+v lacks its position or reason", w)
		}
	}
	want := DefaultConfig()
	want.NodeName, want.Region, want.Datacenter = "worker-07", "europe", "ams1"
	want.DataDir, want.PluginDir, want.BindAddr, want.LogLevel = "/opt/nomad/data", "/opt/nomad/plugins", "0.0.0.0", "DEBUG"
	want.Logging = LoggingConfig{JSON: true, IncludeLocation: true, File: "/var/log/nomad/", RotateBytes: 10485760,
		RotateDuration: 12 * time.Hour, RotateMaxFiles: 5, SyslogFacility: "LOCAL3"}
	want.LeaveOnInterrupt, want.LeaveOnTerminate = true, true
	want.HTTPPort, want.RPCPort, want.SerfPort = 4646, 4647, 4648
	want.Addresses = Addresses{HTTP: "0.0.0.0", RPC: "10.1.0.7", Serf: "10.1.0.7"}
	want.Advertise = Addresses{HTTP: "10.1.0.7", RPC: "10.1.0.7", Serf: "10.1.0.7:5648"}
	want.Autopilot = &structs.AutopilotConfig{CleanupDeadServers: true, LastContactThreshold: 200 * time.Millisecond,
		MaxTrailingLogs: 250, ServerStabilizationTime: 10 * time.Second}
	two := 2
	want.Server = ServerConfig{Enabled: true, BootstrapExpect: 1, HeartbeatGrace: 30 * time.Second, MinHeartbeatTTL: 15 * time.Second, NumSchedulers: &two,
		MaxHeartbeatsPerSecond: 25.5,
		GC: ServerGCConfig{JobGCInterval: 5 * time.Minute, JobGCThreshold: 4 * time.Hour, EvalGCThreshold: time.Hour,
			BatchEvalGCThreshold: 12 * time.Hour, DeploymentGCThreshold: time.Hour, NodeGCThreshold: 48 * time.Hour},
		Join:    ServerJoinConfig{RetryJoin: []string{"10.1.0.5", "10.1.0.6"}, RetryMax: 3, RetryInterval: 15 * time.Second},
		Encrypt: "cg8StVXbQJ0gPvMd9o7yrg=="}
	want.TLS = tlsutil.Config{EnableHTTP: true, EnableRPC: true, CAFile: "/etc/nomad.d/ca.pem",
		CertFile: "/etc/nomad.d/server.pem", KeyFile: "/etc/nomad.d/server-key.pem"}
	want.Telemetry = telemetry.Config{CollectionInterval: time.Second, DisableHostname: true, PrometheusMetrics: true,
		PublishAllocationMetrics: true, PublishNodeMetrics: true}
	want.Client = ClientConfig{
		Enabled: true, NodeClass: "compute", NodePool: "batch-pool", NetworkInterface: "eth0",
		CPUTotalCompute: 12000, MemoryTotalMB: 16384,
		Meta:         map[string]string{"rack": "r12", "connect.log_level": "info", "owner": "team-batch"},
		Options:      map[string]string{"driver.allowlist": "docker,exec,raw_exec", "fingerprint.denylist": "env_aws,env_gce"},
		Reserved:     ReservedConfig{CPU: 500, MemoryMB: 512, DiskMB: 1024, ReservedPorts: "22,80,8500-8600"},
		HostNetworks: map[string]*HostNetworkConfig{"public": {Name: "public", CIDR: "203.0.113.0/24"}},
		GC:           ClientGCConfig{Interval: 2 * time.Minute, MaxAllocs: 100, DiskUsageThreshold: 80, InodeUsageThreshold: 70},
		Artifact:     defaultArtifactConfig(), // http_read_timeout = "30m", the default
		HostVolumes:  map[string]HostVolumeConfig{"scratch": {Path: "/tmp"}},
		Join:         ServerJoinConfig{RetryJoin: []string{}},
		Template:     TemplateConfig{DisableFileSandbox: true},
	}
	want.ACL = ACLConfig{Enabled: true, TokenTTL: 30 * time.Second, PolicyTTL: time.Minute, RoleTTL: 30 * time.Second}
	got := *c
	got.Plugins, got.Warnings = nil, nil
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("config =\n%+v\nwant\n%+v", &got, want)
	}
	if p := pluginJSON(t, c, "docker"); !reflect.DeepEqual(p["volumes"], []any{map[string]any{"enabled": true}}) {
		t.Errorf("docker config = %v", p)
	}
	if on, _ := c.pluginEnabled("raw_exec", true); !on {
		t.Error("raw_exec is not enabled")
	}
}

// TestNomadAgentConfigStarts starts an agent with the Nomad configuration
// (its paths and addresses moved to the test's by a second file and flags):
// it starts with one warning line per ignored setting, logs JSON to stderr
// and to log_file, and leaves on SIGTERM (leave_on_terminate).
func TestNomadAgentConfigStarts(t *testing.T) {
	dir := t.TempDir()
	override := filepath.Join(dir, "override.conf") // JSON, read by its content
	writeFile(t, override, `{
  "data_dir": "`+dir+`/data", "plugin_dir": "`+dir+`/plugins", "log_file": "`+dir+`/logs/",
  "ports": {"http": 0, "rpc": 0, "serf": 0},
  "addresses": {"http": "127.0.0.1", "rpc": "127.0.0.1", "serf": "127.0.0.1"},
  "advertise": {"http": "127.0.0.1", "rpc": "127.0.0.1", "serf": "127.0.0.1"},
  "server": {"server_join": {"retry_join": []}},
  "tls": {"http": false, "rpc": false}
}`)
	var stdout, stderr syncBuffer
	signals := make(chan os.Signal, 1)
	started := make(chan *Agent, 1)
	done := make(chan int, 1)
	args := []string{"-config", "testdata/config/nomad/agent.hcl", "-config", override, "-bind", "127.0.0.1", "-network-interface", loopbackInterface()}
	go func() { done <- runCommand(args, &stdout, &stderr, signals, started) }()
	var a *Agent
	select {
	case a = <-started:
	case code := <-done:
		t.Fatalf("agent exited with %d:\n%s", code, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatal("agent did not start")
	}
	node := a.client.Node()
	if node.Attributes["unique.network.ip-address"] != "127.0.0.1" || node.NodeClass != "compute" || node.NodePool != "batch-pool" || node.Meta["rack"] != "r12" {
		t.Errorf("node = class %q pool %q meta %v ip %q", node.NodeClass, node.NodePool, node.Meta, node.Attributes["unique.network.ip-address"])
	}
	if got := node.NodeResources.Cpu.CpuShares; got != 12000 {
		t.Errorf("cpu_total_compute: node has %d MHz", got)
	}
	if hv := node.HostVolumes["scratch"]; hv == nil || hv.ReadOnly {
		t.Errorf("host_volume scratch: node has %+v", node.HostVolumes)
	}
	signals <- syscall.SIGTERM
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("agent did not stop")
	}
	if !strings.Contains(stdout.String(), "Leaving the cluster") {
		t.Errorf("no leave on SIGTERM with leave_on_terminate:\n%s", stdout.String())
	}
	logs := stderr.String()
	for _, key := range nomadAgentWarnings {
		if n := strings.Count(logs, `"key":"`+key+`"`); n != 1 {
			t.Errorf("%d warning lines for %q, want 1", n, key)
		}
	}
	if n := strings.Count(logs, "drover ignores this Nomad setting"); n != len(nomadAgentWarnings) {
		t.Errorf("%d warning lines, want %d", n, len(nomadAgentWarnings))
	}
	if !strings.Contains(logs, `"source":{`) {
		t.Error("log_include_location: no source in the JSON lines")
	}
	file, err := os.ReadFile(filepath.Join(dir, "logs", DefaultLogFileName))
	if err != nil {
		t.Fatalf("log_file: %v", err)
	}
	if !strings.Contains(string(file), `"msg":"agent started"`) {
		t.Errorf("log file lacks the agent's logs:\n%s", file)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConfigReadByContent: Nomad's API test harness writes its JSON config
// to a temporary file without an extension; it is read as JSON.
func TestConfigReadByContent(t *testing.T) {
	c := loadFiles(t, DefaultConfig(), "testdata/config/nomad/api-harness")
	if c.NodeName != "node-20010" || c.HTTPPort != 20010 || c.RPCPort != 20011 || !c.Server.Enabled || c.Client.Enabled || c.LogLevel != "ERROR" {
		t.Errorf("config = %+v", c)
	}
	if got := warningKeys(c.Warnings); len(got) != 0 {
		t.Errorf("warnings = %q, want none (vault and acl are disabled, as in drover)", got)
	}
	tests := []struct {
		name, file, src string
		check           func(c *Config) bool
	}{
		{"JSON named .hcl", "agent.hcl", `{"data_dir": "/j"}`, func(c *Config) bool { return c.DataDir == "/j" }},
		{"JSON with leading space and BOM", "agent", "\ufeff \n\t{\"name\": \"n\"}", func(c *Config) bool { return c.NodeName == "n" }},
		{"HCL named .json", "agent.json", `data_dir = "/h"`, func(c *Config) bool { return c.DataDir == "/h" }},
		{"JSON list of blocks", "a", `{"client": [{"enabled": true}, {"node_class": "x"}]}`, func(c *Config) bool { return c.Client.Enabled && c.Client.NodeClass == "x" }},
		{"JSON plugin list form", "a", `{"plugin": [{"raw_exec": [{"config": [{"enabled": true}]}]}]}`, func(c *Config) bool { on, _ := c.pluginEnabled("raw_exec", true); return on }},
		{"JSON strings for numbers and bools", "a", `{"ports": {"http": "5000"}, "server": {"enabled": "true"}}`, func(c *Config) bool { return c.HTTPPort == 5000 && c.Server.Enabled }},
		{"JSON null is unset", "a", `{"client": null, "name": "x"}`, func(c *Config) bool { return c.NodeName == "x" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pf, err := parseConfig(tc.file, []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			c := DefaultConfig()
			c.merge(pf)
			if !tc.check(c) {
				t.Errorf("config = %+v", c)
			}
		})
	}
}

// TestConfigNomadHCLSyntax: the HCL forms Nomad's agent files use.
func TestConfigNomadHCLSyntax(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(c *Config) bool
	}{
		{"quoted dotted options (block)", `client {
  options {
    "driver.allowlist"     = "docker,raw_exec"
    "fingerprint.denylist" = "network"
  }
}`, func(c *Config) bool {
			return c.Client.Options["driver.allowlist"] == "docker,raw_exec" && c.Client.Options["fingerprint.denylist"] == "network"
		}},
		{"options as a map", `client { options = { "driver.denylist" = "docker" } }`, func(c *Config) bool { return c.Client.Options["driver.denylist"] == "docker" }},
		{"legacy option names", `client { options { "driver.whitelist" = "exec" "fingerprint.blacklist" = "cgroup" } }`, func(c *Config) bool {
			return c.Client.Options["driver.allowlist"] == "exec" && c.Client.Options["fingerprint.denylist"] == "cgroup"
		}},
		{"unquoted dotted option key", `client { options { driver.denylist = "docker" } }`, func(c *Config) bool { return c.Client.Options["driver.denylist"] == "docker" }},
		{"driver.raw_exec.enable", `client { options { "driver.raw_exec.enable" = "1" } }`, func(c *Config) bool { on, set := c.Client.rawExecOption(); return on && set }},
		{"meta as a map with quoted keys", `client { meta = { "a.b" = "1", c = 2 } }`, func(c *Config) bool { return c.Client.Meta["a.b"] == "1" && c.Client.Meta["c"] == "2" }},
		{"block written as a map", `ports = { http = 5000 }`, func(c *Config) bool { return c.HTTPPort == 5000 }},
		{"repeated blocks merge", "client { enabled = true }\nclient { node_class = \"x\" }", func(c *Config) bool { return c.Client.Enabled && c.Client.NodeClass == "x" }},
		{"servers as one string", `client { servers = "a:4647" }`, func(c *Config) bool { return reflect.DeepEqual(c.Client.Servers, []string{"a:4647"}) }},
		{"heredoc", "name = <<EOT\nnode-h\nEOT\n", func(c *Config) bool { return c.NodeName == "node-h\n" }},
		{"plugin as a map", `plugin = { raw_exec = { config = { enabled = true } } }`, func(c *Config) bool { on, _ := c.pluginEnabled("raw_exec", true); return on }},
		{"log settings", `log_json = true
log_file = "/tmp/x.log"
log_rotate_bytes = 100
log_rotate_duration = "1h"
log_rotate_max_files = 3
enable_syslog = true
syslog_facility = "daemon"
log_include_location = true`, func(c *Config) bool {
			return c.Logging == LoggingConfig{JSON: true, File: "/tmp/x.log", RotateBytes: 100, RotateDuration: time.Hour, RotateMaxFiles: 3,
				EnableSyslog: true, SyslogFacility: "daemon", IncludeLocation: true}
		}},
		{"leave settings", "leave_on_interrupt = true\nleave_on_terminate = true", func(c *Config) bool { return c.LeaveOnInterrupt && c.LeaveOnTerminate }},
		{"enable_debug", "enable_debug = true", func(c *Config) bool { return c.EnableDebug && len(c.Warnings) == 0 }},
		{"enable_debug off by default", "log_level = \"info\"", func(c *Config) bool { return !c.EnableDebug }},
		{"fingerprint overrides", `client {
  network_interface = "eth1"
  preferred_address_family = "ipv6"
  cpu_total_compute = 4000
  memory_total_mb = 2048
  disk_total_mb = 100
  disk_free_mb = 50
}`, func(c *Config) bool {
			cl := c.Client
			return cl.NetworkInterface == "eth1" && cl.PreferredAddressFamily == "ipv6" && cl.CPUTotalCompute == 4000 &&
				cl.MemoryTotalMB == 2048 && cl.DiskTotalMB == 100 && cl.DiskFreeMB == 50
		}},
		{"ui disabled", "ui {\n  enabled = false\n}", func(c *Config) bool { return !c.UI.Enabled && len(c.Warnings) == 0 }},
		{"ui disabled in JSON", `{"ui": {"enabled": false}}`, func(c *Config) bool { return !c.UI.Enabled }},
		{"ui enabled by default", `ui {}`, func(c *Config) bool { return c.UI.Enabled }},
		{"ui's Nomad-only keys are ignored", `ui {
  enabled = false
  label {
    text = "prod"
  }
  content_security_policy {
    script_src = ["'self'"]
  }
}`, func(c *Config) bool {
			return !c.UI.Enabled && reflect.DeepEqual(warningKeys(c.Warnings), []string{"ui.content_security_policy", "ui.label"})
		}},
		{"update check keys are honoured silently", "disable_update_check = true\ndisable_anonymous_signature = true", func(c *Config) bool { return len(c.Warnings) == 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pf, err := parseConfig("a.hcl", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			c := DefaultConfig()
			c.merge(pf)
			for _, w := range pf.warnings {
				c.addWarning(w)
			}
			if !tc.check(c) {
				t.Errorf("config = %+v", c)
			}
		})
	}
}

// TestConfigIgnoredKeys: every Nomad key drover ignores is accepted with
// one warning naming it; a disabled subsystem draws none.
func TestConfigIgnoredKeys(t *testing.T) {
	for section, keys := range nomadIgnored {
		for key := range keys {
			src := key + " = 1\n"
			for _, part := range slices.Backward(strings.Split(section, ".")) {
				if part == "" {
					continue
				}
				if part == "plugin" {
					part = `plugin "x"`
				}
				src = part + " {\n" + src + "}\n"
			}
			path := dotted(section, key)
			t.Run(path, func(t *testing.T) {
				pf, err := parseConfig("a.hcl", []byte(src))
				if err != nil {
					t.Fatalf("%s:\n%v", src, err)
				}
				if got := warningKeys(pf.warnings); !reflect.DeepEqual(got, []string{path}) {
					t.Errorf("%s: warnings %q", src, got)
				}
				if reason, ok := ignoredReason(path); !ok || reason == "" {
					t.Errorf("ignoredReason(%q) = %q, %v", path, reason, ok)
				}
			})
		}
	}
	for _, src := range []string{"acl { enabled = false }", "vault {\n enabled = false\n}", `{"ui": {"enabled": false}}`} {
		pf, err := parseConfig("a.hcl", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if len(pf.warnings) != 0 {
			t.Errorf("%s: warnings %v for a disabled subsystem", src, pf.warnings)
		}
	}
	// One warning per key across files.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.hcl"), "consul { address = \"x\" }\nconsul { name = \"y\" }\n")
	writeFile(t, filepath.Join(dir, "b.json"), `{"consul": {"token": "t"}, "sentinel": {}}`)
	c := loadFiles(t, DefaultConfig(), dir)
	if got := warningKeys(c.Warnings); !reflect.DeepEqual(got, []string{"consul", "sentinel"}) {
		t.Errorf("warnings = %q", got)
	}
}

// TestConfigUnknownKeys: a key that is not Nomad's is an error naming
// file:line:col, with a suggestion when it looks like a typo.
func TestConfigUnknownKeys(t *testing.T) {
	tests := []struct {
		name, file, src string
		want            []string
	}{
		{"top-level typo", "a.hcl", "data_dri = \"/x\"\n", []string{"a.hcl:1:1:", `"data_dri" at the top level`, `did you mean "data_dir"?`}},
		{"dash for underscore", "a.hcl", "bind-addr = \"x\"\n", []string{`did you mean "bind_addr"?`}},
		{"client typo", "a.hcl", "client {\n  node_clas = \"x\"\n}\n", []string{"a.hcl:2:3:", `in client`, `did you mean "node_class"?`}},
		{"server typo", "a.hcl", "server {\n  bootstrap_expected = 1\n}\n", []string{`did you mean "bootstrap_expect"?`}},
		{"typo of an ignored key", "a.hcl", "client {\n  network_sped = 1\n}\n", []string{`did you mean "network_speed"?`}},
		{"nothing close", "a.hcl", "zzzzzzzzzz = 1\n", []string{`"zzzzzzzzzz"`}},
		{"JSON typo", "cfg", "{\n  \"clinet\": {}\n}", []string{"cfg:2:3:", `did you mean "client"?`}},
		{"reserved typo", "a.hcl", "client {\n reserved {\n  memroy = 1\n }\n}\n", []string{"a.hcl:3:3:", `in client.reserved`, `did you mean "memory"?`}},
		{"label on a plain block", "a.hcl", "client \"x\" {\n}\n", []string{"a.hcl:1:1:", "client takes no label"}},
		{"plugin with two labels", "a.hcl", "plugin \"a\" \"b\" {}\n", []string{"plugin takes one label"}},
		{"block as a string", "a.hcl", "client = \"x\"\n", []string{"client must be a block"}},
		{"list for a string", "a.hcl", "name = [\"x\"]\n", []string{"a.hcl:1:8:", "name must be a string, not a list"}},
		{"bad bool", "a.hcl", "log_json = \"maybe\"\n", []string{`log_json = "maybe" must be true or false`}},
		{"bad raw_exec option", "a.hcl", "client { options { \"driver.raw_exec.enable\" = \"yes please\" } }", []string{"driver.raw_exec.enable"}},
		{"JSON trailing garbage", "a", "{\"name\": \"x\"} x", []string{"a:1:"}},
		{"JSON truncated", "a", "{\"name\": \"x\",\n", []string{"a:2:1:", "the file is read as JSON"}},
		{"JSON top level not an object", "a", "{\"a\": 1}", []string{`unknown key "a"`}},
		{"value missing at the end", "a.hcl", "data_dir = \"/x\"\nname = \n", []string{"a.hcl:2:6:", "expected a value after ="}},
		{"HCL error says HCL", "a.json", "name = = 1\n", []string{"a.json:1:", "the file is read as HCL"}},
		{"several errors at once", "a.hcl", "nmae = 1\nbogus = 2\n", []string{"a.hcl:1:1:", "a.hcl:2:1:"}},
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

func TestSuggest(t *testing.T) {
	cands := []string{"client", "server", "data_dir", "datacenter", "bind_addr"}
	for key, want := range map[string]string{"clinet": "client", "sever": "server", "datadir": "data_dir", "x": "", "completely_else": ""} {
		if got := suggest(key, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestAgentConfigDocumented: docs/agent-config.md names every key drover
// honours and every Nomad key it ignores.
func TestAgentConfigDocumented(t *testing.T) {
	raw, err := os.ReadFile("../docs/agent-config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	var keys []string
	pf := &parsedFile{}
	for _, s := range []section{pf.topSection(), (&serverBlock{}).section(), (&clientBlock{}).section()} {
		for k := range s.keys {
			keys = append(keys, k)
		}
	}
	for _, byKey := range nomadIgnored {
		for k := range byKey {
			keys = append(keys, k)
		}
	}
	for _, opt := range []string{optDriverAllowlist, optDriverDenylist, optFingerprintAllowlist, optFingerprintDenylist, optRawExecEnable} {
		keys = append(keys, opt)
	}
	for _, k := range keys {
		if !strings.Contains(doc, "`"+k) {
			t.Errorf("docs/agent-config.md does not document %q", k)
		}
	}
	for _, f := range agentFlags(DefaultConfig()) {
		if !strings.Contains(doc, "`-"+f.name) {
			t.Errorf("docs/agent-config.md does not document -%s", f.name)
		}
	}
}

func TestExampleAgentConfig(t *testing.T) {
	c := loadFiles(t, DefaultConfig(), "../examples/agent.hcl")
	if len(c.Warnings) != 0 || !c.Server.Enabled || !c.Client.Enabled || c.Client.Meta["rack"] != "r1" {
		t.Errorf("examples/agent.hcl: warnings %v, config %+v", c.Warnings, c)
	}
}
