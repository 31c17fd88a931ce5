package agent

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/client/state"
)

// agentFlag is one flag of `drover agent`: the flags are Nomad's (every
// flag of `nomad agent -h`), each setting the config key of the same
// meaning, plus drover's -http-port and -state-move-aside. A flag wins
// over the config files.
type agentFlag struct {
	name    string
	arg     string // placeholder in the help ("<path>"); "" for a bool flag
	section string
	usage   string
	// key is the config key the flag sets ("client.node_class"); "" for
	// flags that are not configuration (-config, -dev, -state-move-aside).
	key string
	// set applies the flag's value. nil with a key: a Nomad setting drover
	// ignores, which draws the key's warning (unless a bool flag is false,
	// which is what drover does anyway).
	set func(c *Config, v string) error
	// repeat: the flag may be given several times (-config, -meta).
	repeat bool
	// flagOnly: no config file key sets this (-recover); key only names
	// it in messages.
	flagOnly bool
}

func (f *agentFlag) isBool() bool { return f.arg == "" }

// Help sections, in the order of the help text.
const (
	sectionGeneral = "General options (clients and servers)"
	sectionServer  = "Server options"
	sectionClient  = "Client options"
	sectionACL     = "ACL options (accepted, ignored)"
	sectionConsul  = "Consul options (accepted, ignored: drover has no Consul integration)"
	sectionVault   = "Vault options (accepted, ignored: drover has no Vault integration)"
)

var helpSections = []string{sectionGeneral, sectionServer, sectionClient, sectionACL, sectionConsul, sectionVault}

// Flags handled before the config files are read.
const (
	flagConfig     = "config"
	flagDev        = "dev"
	flagDevConnect = "dev-connect"
	flagDevConsul  = "dev-consul"
	flagDevVault   = "dev-vault"
)

func setString(dst func(c *Config) *string) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		*dst(c) = v
		return nil
	}
}

func setBool(dst func(c *Config) *bool) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("must be true or false")
		}
		*dst(c) = b
		return nil
	}
}

func setDuration(dst func(c *Config) *time.Duration) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration (30s, 1m)", v)
		}
		*dst(c) = d
		return nil
	}
}

// appendTo adds the flag's value to a list (a repeatable flag).
func appendTo(dst func(c *Config) *[]string) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		p := dst(c)
		*p = append(slices.Clone(*p), splitList(v)...)
		return nil
	}
}

func setInt(dst func(c *Config) *int) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", v)
		}
		*dst(c) = n
		return nil
	}
}

// agentFlags returns the flags of `drover agent`, with def the defaults
// that the help shows.
func agentFlags(def *Config) []*agentFlag {
	g, s, cl := sectionGeneral, sectionServer, sectionClient
	ignored := func(section, name, key, arg, usage string) *agentFlag {
		return &agentFlag{name: name, arg: arg, section: section, key: key, usage: usage}
	}
	consul := func(name, arg, usage string) *agentFlag {
		return ignored(sectionConsul, "consul-"+name, "consul."+strings.ReplaceAll(name, "-", "_"), arg, usage)
	}
	vault := func(name, arg, usage string) *agentFlag {
		return ignored(sectionVault, "vault-"+name, "vault."+strings.ReplaceAll(name, "-", "_"), arg, usage)
	}
	flags := []*agentFlag{
		{name: flagConfig, arg: "<path>", section: g, repeat: true,
			usage: "A config file (HCL or JSON, read by its content) or a directory of .hcl and .json files. Repeat it to merge several; later ones win."},
		{name: flagDev, section: g,
			usage: "Development mode: server and client in one process, state in memory, raw_exec and mock_driver enabled, everything it ran removed when it stops."},
		{name: flagDevConnect, section: g, key: "consul",
			usage: "As -dev (Consul service mesh is not supported: the Consul part is ignored)."},
		{name: flagDevConsul, section: g, key: "consul",
			usage: "As -dev (Consul workload identity is not supported: the Consul part is ignored)."},
		{name: flagDevVault, section: g, key: "vault",
			usage: "As -dev (Vault workload identity is not supported: the Vault part is ignored)."},
		{name: "bind", arg: "<addr>", section: g, key: "bind_addr", set: setString(func(c *Config) *string { return &c.BindAddr }),
			usage: "The address every listener binds to. Default: " + def.BindAddr + "."},
		{name: "http-port", arg: "<port>", section: g, key: "ports.http", set: setInt(func(c *Config) *int { return &c.HTTPPort }),
			usage: fmt.Sprintf("The HTTP API port; 0 picks a free one (drover's; Nomad sets it in the ports block). Default: %d.", def.HTTPPort)},
		{name: "data-dir", arg: "<path>", section: g, key: "data_dir", set: setString(func(c *Config) *string { return &c.DataDir }),
			usage: "The directory of the agent's state; required outside -dev (in -dev it only holds allocation directories)."},
		{name: "plugin-dir", arg: "<path>", section: g, key: "plugin_dir", set: setString(func(c *Config) *string { return &c.PluginDir }),
			usage: "The directory of external plugins. Default: <data-dir>/plugins."},
		{name: "region", arg: "<region>", section: g, key: "region", set: setString(func(c *Config) *string { return &c.Region }),
			usage: "The region the agent belongs to. Default: " + def.Region + "."},
		{name: "dc", arg: "<datacenter>", section: g, key: "datacenter", set: setString(func(c *Config) *string { return &c.Datacenter }),
			usage: "The datacenter of the agent. Default: " + def.Datacenter + "."},
		{name: "node", arg: "<name>", section: g, key: "name", set: setString(func(c *Config) *string { return &c.NodeName }),
			usage: "The name of the agent and of its client node. Default: the hostname."},
		{name: "log-level", arg: "<level>", section: g, key: "log_level", set: setString(func(c *Config) *string { return &c.LogLevel }),
			usage: "The log level: trace, debug, info, warn or error. Default: " + def.LogLevel + "."},
		{name: "log-json", section: g, key: "log_json", set: setBool(func(c *Config) *bool { return &c.Logging.JSON }),
			usage: "Write logs as JSON lines."},
		{name: "log-include-location", section: g, key: "log_include_location", set: setBool(func(c *Config) *bool { return &c.Logging.IncludeLocation }),
			usage: "Add the source file and line to every log line."},
		ignored(g, "eventlog", "eventlog.enabled", "", "Log to the Windows event log (ignored)."),
		ignored(g, "eventlog-level", "eventlog.level", "<level>", "The Windows event log level (ignored)."),
		{name: state.MoveAsideFlag, section: g,
			usage: "Rename <data_dir>/client/state.db to state.db.corrupt-<UTC timestamp>, print the new path and exit. Refused while an agent holds the file."},

		{name: "server", section: s, key: "server.enabled", set: setBool(func(c *Config) *bool { return &c.Server.Enabled }),
			usage: "Run a server."},
		{name: "bootstrap-expect", arg: "<num>", section: s, key: "server.bootstrap_expect", set: setInt(func(c *Config) *int { return &c.Server.BootstrapExpect }),
			usage: "The number of servers that bootstrap the cluster together once they found each other (1: a single server; 3 or 5 for a cluster). Every server of a new cluster gets the same value."},
		{name: "encrypt", arg: "<key>", section: s, key: "server.encrypt", set: setString(func(c *Config) *string { return &c.Server.Encrypt }),
			usage: "The gossip encryption key: base64 of 16, 24 or 32 bytes (openssl rand -base64 32); every server needs the same."},
		{name: "join", arg: "<address>", section: s, key: "server.server_join.start_join", repeat: true, set: appendTo(func(c *Config) *[]string { return &c.Server.Join.StartJoin }),
			usage: "The serf address (host or host:4648) of a server to join at start; repeatable. The start fails when none answers."},
		{name: "retry-join", arg: "<address>", section: s, key: "server.server_join.retry_join", repeat: true, set: appendTo(func(c *Config) *[]string { return &c.Server.Join.RetryJoin }),
			usage: "The serf address (host or host:4648) of a server to join, retrying until one answers; repeatable."},
		{name: "retry-max", arg: "<num>", section: s, key: "server.server_join.retry_max", set: setInt(func(c *Config) *int { return &c.Server.Join.RetryMax }),
			usage: "The number of join attempts; 0 retries without limit."},
		{name: "retry-interval", arg: "<duration>", section: s, key: "server.server_join.retry_interval", set: setDuration(func(c *Config) *time.Duration { return &c.Server.Join.RetryInterval }),
			usage: "The time between join attempts. Default: 30s."},
		{name: "recover", section: s, key: "server.recover", flagOnly: true, set: setBool(func(c *Config) *bool { return &c.Server.Recover }),
			usage: "Make this server the only voter of its cluster at start, keeping its state: after most servers were lost for good; the others then join it with empty data dirs (drover's; see docs/cluster.md)."},
		ignored(s, "raft-protocol", "server.raft_protocol", "<num>", "The raft protocol version (ignored)."),
		ignored(s, "rejoin", "server.rejoin_after_leave", "", "Rejoin after a previous leave (ignored: a drover server always rejoins the servers it knew)."),

		{name: "client", section: cl, key: "client.enabled", set: setBool(func(c *Config) *bool { return &c.Client.Enabled }),
			usage: "Run a client (node agent)."},
		{name: "servers", arg: "<host:port,...>", section: cl, key: "client.servers", set: func(c *Config, v string) error {
			c.Client.Servers = splitList(v)
			return nil
		}, usage: "The servers' RPC addresses, comma-separated (10.0.0.1:4647)."},
		{name: "state-dir", arg: "<path>", section: cl, key: "client.state_dir", set: setString(func(c *Config) *string { return &c.Client.StateDir }),
			usage: "The directory of the client's state file. Default (and only value for now): <data-dir>/client."},
		{name: "alloc-dir", arg: "<path>", section: cl, key: "client.alloc_dir", set: setString(func(c *Config) *string { return &c.Client.AllocDir }),
			usage: "The root of the allocation directories. Default: <data-dir>/alloc."},
		{name: "node-class", arg: "<class>", section: cl, key: "client.node_class", set: setString(func(c *Config) *string { return &c.Client.NodeClass }),
			usage: "The node's class, for constraints (${node.class})."},
		{name: "node-pool", arg: "<pool>", section: cl, key: "client.node_pool", set: setString(func(c *Config) *string { return &c.Client.NodePool }),
			usage: "The node's pool. Default: default."},
		{name: "meta", arg: "<key=value>", section: cl, key: "client.meta", repeat: true, set: func(c *Config, v string) error {
			k, val, ok := strings.Cut(v, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("%q is not KEY=VALUE", v)
			}
			if c.Client.Meta == nil {
				c.Client.Meta = map[string]string{}
			} else {
				c.Client.Meta = maps.Clone(c.Client.Meta)
			}
			c.Client.Meta[strings.TrimSpace(k)] = val
			return nil
		}, usage: "A node metadata pair (${meta.KEY}); repeat it for each pair."},
		{name: "network-interface", arg: "<name>", section: cl, key: "client.network_interface", set: setString(func(c *Config) *string { return &c.Client.NetworkInterface }),
			usage: "The interface whose address the node reports as unique.network.ip-address. Default: the default route's (the loopback in -dev)."},
		{name: "preferred-address-family", arg: "<ipv4|ipv6>", section: cl, key: "client.preferred_address_family", set: setString(func(c *Config) *string { return &c.Client.PreferredAddressFamily }),
			usage: "The address family to prefer on that interface. Default: its first address."},
		ignored(cl, "network-speed", "client.network_speed", "<mbits>", "The network speed (ignored: bandwidth is not scheduled)."),
		ignored(cl, "alloc-mounts-dir", "client.alloc_mounts_dir", "<path>", "The directory of allocation mounts (ignored)."),
		ignored(cl, "host-volumes-dir", "client.host_volumes_dir", "<path>", "The directory of dynamic host volumes (ignored)."),
		ignored(cl, "host-volume-plugin-dir", "client.host_volume_plugin_dir", "<path>", "The directory of host volume plugins (ignored)."),
		ignored(cl, "client-intro-token", "client.intro_token", "<token>", "The client's introduction token (ignored)."),

		{name: "acl-enabled", section: sectionACL, key: "acl.enabled", set: setBool(func(c *Config) *bool { return &c.ACL.Enabled }),
			usage: "Enable ACLs: every API request and RPC needs a token that grants it (docs/acl.md)."},
		ignored(sectionACL, "acl-replication-token", "acl.replication_token", "<token>", "The ACL replication token (ignored)."),

		consul("address", "<addr>", "Consul's address."),
		consul("auth", "<user:pass>", "Consul's HTTP basic auth."),
		consul("auto-advertise", "", "Advertise services in Consul."),
		consul("ca-file", "<path>", "Consul's CA certificate."),
		consul("cert-file", "<path>", "The client certificate for Consul."),
		consul("key-file", "<path>", "The client key for Consul."),
		consul("checks-use-advertise", "", "Use advertise addresses in checks."),
		consul("client-auto-join", "", "Find servers through Consul."),
		consul("client-service-name", "<name>", "The clients' service name."),
		consul("client-http-check-name", "<name>", "The clients' HTTP check name."),
		consul("client-failures-before-critical", "<num>", "Client check failures before critical."),
		consul("client-failures-before-warning", "<num>", "Client check failures before warning."),
		consul("server-service-name", "<name>", "The servers' service name."),
		consul("server-http-check-name", "<name>", "The servers' HTTP check name."),
		consul("server-serf-check-name", "<name>", "The servers' serf check name."),
		consul("server-rpc-check-name", "<name>", "The servers' RPC check name."),
		consul("server-failures-before-critical", "<num>", "Server check failures before critical."),
		consul("server-failures-before-warning", "<num>", "Server check failures before warning."),
		consul("server-auto-join", "", "Find other servers through Consul."),
		consul("ssl", "", "Talk to Consul over HTTPS."),
		consul("token", "<token>", "Consul's ACL token."),
		consul("verify-ssl", "", "Verify Consul's certificate."),

		vault("enabled", "", "Enable Vault."),
		vault("address", "<addr>", "Vault's address."),
		vault("namespace", "<namespace>", "The Vault namespace."),
		vault("create-from-role", "<role>", "The Vault role for tokens."),
		vault("ca-file", "<path>", "Vault's CA certificate."),
		vault("ca-path", "<path>", "A directory of CA certificates."),
		vault("cert-file", "<path>", "The client certificate for Vault."),
		vault("key-file", "<path>", "The client key for Vault."),
		vault("tls-skip-verify", "", "Skip Vault's certificate check."),
		vault("tls-server-name", "<name>", "Vault's TLS server name."),
	}
	return flags
}

// flagUse is one occurrence of a flag on the command line.
type flagUse struct {
	flag  *agentFlag
	value string
}

// flagValue records a flag's occurrences, in command-line order, for
// flag.FlagSet.
type flagValue struct {
	flag *agentFlag
	uses *[]flagUse
}

func (v flagValue) String() string { return "" }

func (v flagValue) Set(s string) error {
	if v.flag.isBool() {
		if _, err := strconv.ParseBool(s); err != nil {
			return fmt.Errorf("must be true or false")
		}
	}
	*v.uses = append(*v.uses, flagUse{flag: v.flag, value: s})
	return nil
}

// IsBoolFlag lets a bool flag go without a value (-server).
func (v flagValue) IsBoolFlag() bool { return v.flag.isBool() }

// applyFlags applies the configuration flags in command-line order; an
// ignored Nomad setting adds its warning to c.
func applyFlags(c *Config, uses []flagUse) error {
	for _, u := range uses {
		f := u.flag
		if f.key == "" {
			continue
		}
		if f.set == nil {
			if f.isBool() && u.value == "false" {
				continue // the subsystem off: what drover does
			}
			reason, _ := ignoredReason(f.key)
			c.addWarning(ConfigWarning{Key: f.key, Where: "-" + f.name, Reason: reason})
			continue
		}
		if err := f.set(c, u.value); err != nil {
			return fmt.Errorf("-%s: %w", f.name, err)
		}
	}
	return nil
}

// helpWidth is the width the help text is wrapped to.
const helpWidth = 80

// helpLabelMax is the widest flag label that has its description beside
// it; a longer one has it on the next line.
const helpLabelMax = 28

// writeFlagHelp writes the flags by section: each flag with its argument
// in a column, its description (and config key) wrapped beside it.
func writeFlagHelp(w io.Writer, flags []*agentFlag) {
	width := 0
	for _, f := range flags {
		if len(flagLabel(f)) <= helpLabelMax {
			width = max(width, len(flagLabel(f)))
		}
	}
	col := width + 4 // indent and gap
	for _, sec := range helpSections {
		fmt.Fprintf(w, "\n%s:\n\n", sec)
		for _, f := range flags {
			if f.section != sec {
				continue
			}
			text := f.usage
			if f.key != "" && f.set != nil && !f.flagOnly {
				text += " (config: " + f.key + ")"
			}
			lines := wrapWords(text, helpWidth-col)
			label := flagLabel(f)
			if len(label) > width {
				fmt.Fprintf(w, "  %s\n", label)
			} else {
				fmt.Fprintf(w, "  %-*s%s\n", col-2, label, lines[0])
				lines = lines[1:]
			}
			for _, l := range lines {
				fmt.Fprintf(w, "%*s%s\n", col, "", l)
			}
		}
	}
}

func flagLabel(f *agentFlag) string {
	if f.isBool() {
		return "-" + f.name
	}
	return "-" + f.name + "=" + f.arg
}

// wrapWords breaks text into lines of at most width characters (a longer
// word stands alone).
func wrapWords(text string, width int) []string {
	width = max(width, 20)
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
