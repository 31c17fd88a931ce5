package agent

import (
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-io/drover/client/state"
)

// nomadAgentFlags are the flags of `nomad agent -h`: drover has every one.
var nomadAgentFlags = []string{
	"acl-enabled", "acl-replication-token", "alloc-dir", "alloc-mounts-dir", "bind", "bootstrap-expect",
	"client", "client-intro-token", "config", "consul-address", "consul-auth", "consul-auto-advertise",
	"consul-ca-file", "consul-cert-file", "consul-checks-use-advertise", "consul-client-auto-join",
	"consul-client-failures-before-critical", "consul-client-failures-before-warning",
	"consul-client-http-check-name", "consul-client-service-name", "consul-key-file",
	"consul-server-auto-join", "consul-server-failures-before-critical", "consul-server-failures-before-warning",
	"consul-server-http-check-name", "consul-server-rpc-check-name", "consul-server-serf-check-name",
	"consul-server-service-name", "consul-ssl", "consul-token", "consul-verify-ssl", "data-dir", "dc",
	"dev", "dev-connect", "dev-consul", "dev-vault", "encrypt", "eventlog", "eventlog-level",
	"host-volume-plugin-dir", "host-volumes-dir", "join", "log-include-location", "log-json", "log-level",
	"meta", "network-interface", "network-speed", "node", "node-class", "node-pool", "plugin-dir",
	"preferred-address-family", "raft-protocol", "region", "rejoin", "retry-interval", "retry-join",
	"retry-max", "server", "servers", "state-dir", "vault-address", "vault-ca-file", "vault-ca-path",
	"vault-cert-file", "vault-create-from-role", "vault-enabled", "vault-key-file", "vault-namespace",
	"vault-tls-server-name", "vault-tls-skip-verify",
}

func TestAgentFlagsCoverNomad(t *testing.T) {
	have := map[string]*agentFlag{}
	for _, f := range agentFlags(DefaultConfig()) {
		if have[f.name] != nil {
			t.Errorf("flag -%s defined twice", f.name)
		}
		have[f.name] = f
	}
	for _, name := range nomadAgentFlags {
		if have[name] == nil {
			t.Errorf("nomad's -%s is missing", name)
		}
	}
	for name, f := range have {
		if f.usage == "" || !slices.Contains(helpSections, f.section) {
			t.Errorf("-%s has no usage or an unknown section", name)
		}
		if f.key != "" && f.set == nil {
			if _, ok := ignoredReason(f.key); !ok {
				t.Errorf("-%s sets %q, which is neither honoured nor a known ignored key", name, f.key)
			}
		}
	}
}

// parseArgs runs parseFlags with a data dir and -server so that the
// configuration validates.
func parseArgs(t *testing.T, args ...string) *Config {
	t.Helper()
	cmd, err := parseFlags(append([]string{"-server", "-data-dir", "/d"}, args...), io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags(%q): %v", args, err)
	}
	return cmd.cfg
}

func TestAgentFlagsSetTheirKeys(t *testing.T) {
	tests := []struct {
		args  []string
		check func(c *Config) bool
	}{
		{[]string{"-bind", "10.0.0.1"}, func(c *Config) bool { return c.BindAddr == "10.0.0.1" }},
		{[]string{"-http-port", "0"}, func(c *Config) bool { return c.HTTPPort == 0 }},
		{[]string{"-data-dir", "/other"}, func(c *Config) bool { return c.DataDir == "/other" }},
		{[]string{"-plugin-dir", "/p"}, func(c *Config) bool { return c.PluginDir == "/p" }},
		{[]string{"-region", "eu"}, func(c *Config) bool { return c.Region == "eu" }},
		{[]string{"-dc", "ams"}, func(c *Config) bool { return c.Datacenter == "ams" }},
		{[]string{"-node", "n7"}, func(c *Config) bool { return c.NodeName == "n7" }},
		{[]string{"-log-level", "DEBUG"}, func(c *Config) bool { return c.LogLevel == "DEBUG" }},
		{[]string{"-log-json"}, func(c *Config) bool { return c.Logging.JSON }},
		{[]string{"-log-include-location"}, func(c *Config) bool { return c.Logging.IncludeLocation }},
		{[]string{"-server=false", "-client", "-servers", "a:4647"}, func(c *Config) bool { return !c.Server.Enabled && c.Client.Enabled }},
		{[]string{"-bootstrap-expect", "1"}, func(c *Config) bool { return c.Server.BootstrapExpect == 1 }},
		{[]string{"-client", "-servers", "a:4647, b:4647,"}, func(c *Config) bool { return reflect.DeepEqual(c.Client.Servers, []string{"a:4647", "b:4647"}) }},
		{[]string{"-client", "-state-dir", "/d/client"}, func(c *Config) bool { return c.Client.StateDir == "/d/client" }},
		{[]string{"-client", "-alloc-dir", "/allocs"}, func(c *Config) bool { return c.Client.AllocDir == "/allocs" }},
		{[]string{"-node-class", "gpu"}, func(c *Config) bool { return c.Client.NodeClass == "gpu" }},
		{[]string{"-node-pool", "prod"}, func(c *Config) bool { return c.Client.NodePool == "prod" }},
		{[]string{"-meta", "rack=r1", "-meta", "zone=a=b"}, func(c *Config) bool {
			return reflect.DeepEqual(c.Client.Meta, map[string]string{"rack": "r1", "zone": "a=b"})
		}},
		{[]string{"-network-interface", "eth1"}, func(c *Config) bool { return c.Client.NetworkInterface == "eth1" }},
		{[]string{"-preferred-address-family", "ipv6"}, func(c *Config) bool { return c.Client.PreferredAddressFamily == "ipv6" }},
		{[]string{"-dev"}, func(c *Config) bool { return c.DevMode && c.Client.NetworkInterface == loopbackInterface() }},
		{[]string{"-dev-connect"}, func(c *Config) bool { return c.DevMode && slices.Contains(warningKeys(c.Warnings), "consul") }},
		{[]string{"-dev-consul"}, func(c *Config) bool { return c.DevMode && slices.Contains(warningKeys(c.Warnings), "consul") }},
		{[]string{"-dev-vault"}, func(c *Config) bool { return c.DevMode && slices.Contains(warningKeys(c.Warnings), "vault") }},
		{[]string{"-acl-enabled=false", "-vault-enabled=false"}, func(c *Config) bool { return len(c.Warnings) == 0 }},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if c := parseArgs(t, tc.args...); !tc.check(c) {
				t.Errorf("config = %+v", c)
			}
		})
	}
}

// TestAgentFlagsIgnored: each flag of a Nomad setting drover does not have
// is accepted and draws its key's warning, naming the flag.
func TestAgentFlagsIgnored(t *testing.T) {
	for _, f := range agentFlags(DefaultConfig()) {
		if f.set != nil || f.key == "" || strings.HasPrefix(f.name, "dev-") {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			arg := "-" + f.name
			if !f.isBool() {
				arg += "=1"
			}
			c := parseArgs(t, arg)
			if len(c.Warnings) != 1 || c.Warnings[0].Key != f.key || c.Warnings[0].Where != "-"+f.name || c.Warnings[0].Reason == "" {
				t.Errorf("warnings = %+v, want one for %s from -%s", c.Warnings, f.key, f.name)
			}
		})
	}
}

func TestAgentFlagsWinOverFiles(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/agent.json"
	writeFile(t, path, `{"client": {"node_class": "file", "meta": {"a": "file", "b": "file"}, "options": {"driver.denylist": "docker"}}, "log_json": true, "consul": {"address": "x"}}`)
	c := parseArgs(t, "-config", path, "-node-class", "flag", "-meta", "a=flag", "-log-json=false", "-consul-address", "y")
	if c.Client.NodeClass != "flag" || c.Logging.JSON {
		t.Errorf("flags do not win: class %q json %v", c.Client.NodeClass, c.Logging.JSON)
	}
	if !reflect.DeepEqual(c.Client.Meta, map[string]string{"a": "flag", "b": "file"}) {
		t.Errorf("meta = %v: -meta merges key by key over the file", c.Client.Meta)
	}
	if got := warningKeys(c.Warnings); !reflect.DeepEqual(got, []string{"consul", "consul.address"}) {
		t.Errorf("warnings = %q", got)
	}
}

func TestAgentFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-meta", "novalue"}, `-meta: "novalue" is not KEY=VALUE`},
		{[]string{"-bootstrap-expect", "x"}, `-bootstrap-expect`},
		{[]string{"-server=maybe"}, "must be true or false"},
		{[]string{"-preferred-address-family", "ipv5"}, `preferred_address_family = "ipv5"`},
		{[]string{"-http-port", "x"}, "-http-port"},
	}
	for _, tc := range tests {
		_, err := parseFlags(append([]string{"-server", "-data-dir", "/d"}, tc.args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestAgentHelp(t *testing.T) {
	var out strings.Builder
	writeFlagHelp(&out, agentFlags(DefaultConfig()))
	help := out.String()
	for _, name := range append(slices.Clone(nomadAgentFlags), "http-port", state.MoveAsideFlag) {
		if !strings.Contains(help, "  -"+name) {
			t.Errorf("help lacks -%s", name)
		}
	}
	for i, line := range strings.Split(help, "\n") {
		if len(line) > helpWidth {
			t.Errorf("help line %d is %d characters (over %d): %q", i+1, len(line), helpWidth, line)
		}
	}
}

func TestLeaveOnSignal(t *testing.T) {
	tests := []struct {
		onInt, onTerm bool
		sig           os.Signal
		want          bool
	}{
		{false, false, os.Interrupt, false},
		{true, false, os.Interrupt, true},
		{true, false, syscall.SIGTERM, false},
		{false, true, syscall.SIGTERM, true},
		{true, true, syscall.SIGHUP, false},
	}
	for _, tc := range tests {
		c := &Config{LeaveOnInterrupt: tc.onInt, LeaveOnTerminate: tc.onTerm}
		if got := leaveOnSignal(c, tc.sig); got != tc.want {
			t.Errorf("leave_on_interrupt=%v leave_on_terminate=%v %v: got %v", tc.onInt, tc.onTerm, tc.sig, got)
		}
	}
}
