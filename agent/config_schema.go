package agent

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// fileConfig is one agent configuration file as written: pointers and nil
// slices are "not set", so that merging knows what a later file sets.
// Every key is documented in docs/agent-config.md.
//
// The schema is the section tables below: each honoured key has a keyFunc
// that sets a field here. Nomad keys drover does not honour yet are listed
// in nomadIgnored (config_nomad.go) and draw one warning each; honouring
// one is adding its field and keyFunc here, a line in merge, and removing
// it from nomadIgnored.
type fileConfig struct {
	Name       *string
	Region     *string
	Datacenter *string
	DataDir    *string
	PluginDir  *string
	BindAddr   *string

	Log   logFileConfig
	Leave leaveConfig
	// DisableUpdateCheck and DisableAnonymousSignature are honoured as
	// they stand: drover never contacts an update service.
	DisableUpdateCheck        *bool
	DisableAnonymousSignature *bool
	EnableDebug               *bool
	GCMemoryLimit             *string

	Ports     *portsBlock
	Addresses *addressesBlock
	Advertise *addressesBlock
	Autopilot *autopilotBlock
	Server    *serverBlock
	Client    *clientBlock
	UI        *uiBlock
	Telemetry *telemetryBlock // config_telemetry.go
	TLS       *tlsBlock       // config_tls.go
	ACL       *aclBlock       // config_acl.go
}

// logFileConfig is the logging keys of a file.
type logFileConfig struct {
	Level           *string
	JSON            *bool
	IncludeLocation *bool
	File            *string
	RotateBytes     *int
	RotateDuration  *time.Duration
	RotateMaxFiles  *int
	EnableSyslog    *bool
	SyslogFacility  *string
}

type leaveConfig struct {
	OnInterrupt *bool
	OnTerminate *bool
}

type uiBlock struct {
	Enabled *bool
}

type portsBlock struct {
	HTTP *int
	RPC  *int
	Serf *int
}

type addressesBlock struct {
	HTTP *string
	RPC  *string
	Serf *string
}

// autopilotBlock is the top-level autopilot block: the autopilot
// configuration until an operator sets one.
type autopilotBlock struct {
	CleanupDeadServers      *bool
	LastContactThreshold    *time.Duration
	MaxTrailingLogs         *int
	MinQuorum               *int
	ServerStabilizationTime *time.Duration
}

// serverJoinBlock is server_join (in the server and the client blocks),
// or the deprecated keys of the server block itself.
type serverJoinBlock struct {
	StartJoin     []string
	RetryJoin     []string
	RetryInterval *time.Duration
	RetryMax      *int
}

type serverBlock struct {
	Enabled         *bool
	BootstrapExpect *int
	HeartbeatGrace  *time.Duration
	MinHeartbeatTTL *time.Duration
	// MaxHeartbeatsPerSecond scales heartbeat TTLs with the nodes.
	MaxHeartbeatsPerSecond *float64
	// The servers' garbage collection (server_gc.go).
	JobGCInterval         *time.Duration
	JobGCThreshold        *time.Duration
	EvalGCThreshold       *time.Duration
	BatchEvalGCThreshold  *time.Duration
	DeploymentGCThreshold *time.Duration
	NodeGCThreshold       *time.Duration
	// NumSchedulers is a pointer in Config too: nil is "one per core".
	NumSchedulers   **int
	JobMaxCount     *int
	EvalNackTimeout *time.Duration
	RaftMultiplier  *int
	Encrypt         *string
	// Join holds server_join, and the deprecated start_join, retry_join,
	// retry_interval and retry_max of the server block itself.
	Join *serverJoinBlock
}

type clientBlock struct {
	Enabled                *bool
	Servers                []string
	NodeClass              *string
	NodePool               *string
	AllocDir               *string
	StateDir               *string
	NetworkInterface       *string
	PreferredAddressFamily *string
	CPUTotalCompute        *int
	MemoryTotalMB          *int
	DiskTotalMB            *int
	DiskFreeMB             *int
	GCInterval             *time.Duration
	GCMaxAllocs            *int
	GCDiskUsageThreshold   *float64
	GCInodeUsageThreshold  *float64
	// Meta merges key by key across files.
	Meta map[string]string
	// Options holds the client options drover honours (see
	// honouredOptions), merged key by key across files.
	Options        map[string]string
	Reserved       *reservedBlock
	MinDynamicPort *int
	MaxDynamicPort *int
	// CNIPath, CNIConfigDir, BridgeNetworkName and BridgeNetworkSubnet
	// configure bridge and CNI networking (config_cni.go).
	CNIPath             *string
	CNIConfigDir        *string
	BridgeNetworkName   *string
	BridgeNetworkSubnet *string
	// BridgeNetworkSubnetIPv6 adds an IPv6 range to the bridge network.
	BridgeNetworkSubnetIPv6 *string
	// HostNetworks are the host_network blocks by name; a later file's
	// block of the same name replaces an earlier one's.
	HostNetworks map[string]*HostNetworkConfig
	Artifact     *artifactBlock
	// HostVolumes are the file's host_volume blocks by name
	// (config_host_volumes.go).
	HostVolumes map[string]*hostVolumeBlock
	Join        *serverJoinBlock
	Template    *templateBlock
}

type reservedBlock struct {
	CPU           *int
	Memory        *int
	Disk          *int
	ReservedPorts *string
}

// topSection is the top level of a file.
func (pf *parsedFile) topSection() section {
	fc := &pf.cfg
	return section{path: "", keys: map[string]keyFunc{
		"name":                        strKey(&fc.Name, ""),
		"region":                      strKey(&fc.Region, ""),
		"datacenter":                  strKey(&fc.Datacenter, ""),
		"data_dir":                    strKey(&fc.DataDir, ""),
		"plugin_dir":                  strKey(&fc.PluginDir, ""),
		"bind_addr":                   strKey(&fc.BindAddr, ""),
		"log_level":                   strKey(&fc.Log.Level, ""),
		"log_json":                    boolKey(&fc.Log.JSON, ""),
		"log_include_location":        boolKey(&fc.Log.IncludeLocation, ""),
		"log_file":                    strKey(&fc.Log.File, ""),
		"log_rotate_bytes":            intKey(&fc.Log.RotateBytes, ""),
		"log_rotate_duration":         durationKey(&fc.Log.RotateDuration, ""),
		"log_rotate_max_files":        intKey(&fc.Log.RotateMaxFiles, ""),
		"enable_syslog":               boolKey(&fc.Log.EnableSyslog, ""),
		"syslog_facility":             strKey(&fc.Log.SyslogFacility, ""),
		"leave_on_interrupt":          boolKey(&fc.Leave.OnInterrupt, ""),
		"leave_on_terminate":          boolKey(&fc.Leave.OnTerminate, ""),
		"disable_update_check":        boolKey(&fc.DisableUpdateCheck, ""),
		"disable_anonymous_signature": boolKey(&fc.DisableAnonymousSignature, ""),
		"enable_debug":                boolKey(&fc.EnableDebug, ""),
		"gc_memory_limit":             strKey(&fc.GCMemoryLimit, ""),
		"ports": blockKey(func() section {
			if fc.Ports == nil {
				fc.Ports = &portsBlock{}
			}
			return section{path: "ports", keys: map[string]keyFunc{
				"http": intKey(&fc.Ports.HTTP, "ports"),
				"rpc":  intKey(&fc.Ports.RPC, "ports"),
				"serf": intKey(&fc.Ports.Serf, "ports"),
			}}
		}),
		"addresses": blockKey(func() section {
			if fc.Addresses == nil {
				fc.Addresses = &addressesBlock{}
			}
			return fc.Addresses.section("addresses")
		}),
		"advertise": blockKey(func() section {
			if fc.Advertise == nil {
				fc.Advertise = &addressesBlock{}
			}
			return fc.Advertise.section("advertise")
		}),
		"autopilot": blockKey(func() section {
			if fc.Autopilot == nil {
				fc.Autopilot = &autopilotBlock{}
			}
			a, p := fc.Autopilot, "autopilot"
			return section{path: p, keys: map[string]keyFunc{
				"cleanup_dead_servers":      boolKey(&a.CleanupDeadServers, p),
				"last_contact_threshold":    durationKey(&a.LastContactThreshold, p),
				"max_trailing_logs":         intKey(&a.MaxTrailingLogs, p),
				"min_quorum":                intKey(&a.MinQuorum, p),
				"server_stabilization_time": durationKey(&a.ServerStabilizationTime, p),
			}}
		}),
		"server": blockKey(func() section {
			if fc.Server == nil {
				fc.Server = &serverBlock{}
			}
			return fc.Server.section()
		}),
		"client": blockKey(func() section {
			if fc.Client == nil {
				fc.Client = &clientBlock{}
			}
			return fc.Client.section()
		}),
		"plugin": labelledBlocks("plugin", pf.decodePlugin),
		"telemetry": blockKey(func() section { // config_telemetry.go
			if fc.Telemetry == nil {
				fc.Telemetry = &telemetryBlock{}
			}
			return fc.Telemetry.section()
		}),
		"tls": blockKey(func() section { // config_tls.go
			if fc.TLS == nil {
				fc.TLS = &tlsBlock{}
			}
			return fc.TLS.section()
		}),
		"acl": blockKey(func() section { // config_acl.go
			if fc.ACL == nil {
				fc.ACL = &aclBlock{}
			}
			return fc.ACL.section()
		}),
		"ui": blockKey(func() section {
			if fc.UI == nil {
				fc.UI = &uiBlock{}
			}
			return section{path: "ui", keys: map[string]keyFunc{
				"enabled": boolKey(&fc.UI.Enabled, "ui"),
			}}
		}),
	}}
}

func (s *serverBlock) section() section {
	const p = "server"
	return section{path: p, keys: map[string]keyFunc{
		"enabled":                   boolKey(&s.Enabled, p),
		"bootstrap_expect":          intKey(&s.BootstrapExpect, p),
		"heartbeat_grace":           durationKey(&s.HeartbeatGrace, p),
		"min_heartbeat_ttl":         durationKey(&s.MinHeartbeatTTL, p),
		"max_heartbeats_per_second": floatKey(&s.MaxHeartbeatsPerSecond, p),
		"job_gc_interval":           durationKey(&s.JobGCInterval, p),
		"job_gc_threshold":          durationKey(&s.JobGCThreshold, p),
		"eval_gc_threshold":         durationKey(&s.EvalGCThreshold, p),
		"batch_eval_gc_threshold":   durationKey(&s.BatchEvalGCThreshold, p),
		"deployment_gc_threshold":   durationKey(&s.DeploymentGCThreshold, p),
		"node_gc_threshold":         durationKey(&s.NodeGCThreshold, p),
		"num_schedulers": func(d *decoder, it *cfgItem) {
			var n *int
			intKey(&n, p)(d, it)
			if n != nil {
				s.NumSchedulers = &n
			}
		},
		"job_max_count":     intKey(&s.JobMaxCount, p),
		"eval_nack_timeout": durationKey(&s.EvalNackTimeout, p),
		"raft_multiplier":   intKey(&s.RaftMultiplier, p),
		"encrypt":           strKey(&s.Encrypt, p),
		"server_join":       blockKey(func() section { return s.join().section(p + ".server_join") }),
		// Nomad's older spelling: the join keys in the server block.
		"start_join":     joinListKey(&s.join().StartJoin, p),
		"retry_join":     joinListKey(&s.join().RetryJoin, p),
		"retry_interval": durationKey(&s.join().RetryInterval, p),
		"retry_max":      intKey(&s.join().RetryMax, p),
	}}
}

// joinListKey reads a list of addresses to join. Cloud auto-join
// ("provider=aws tag_key=..."), which drover does not have, is dropped
// with a warning: the file still starts the agent.
func joinListKey(dst *[]string, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		key := dotted(path, it.key)
		l, ok := d.strList(key, it.val)
		if !ok {
			return
		}
		keep := []string{}
		for _, a := range l {
			if strings.Contains(a, "provider=") {
				d.warnings = append(d.warnings, ConfigWarning{Key: key, Where: d.where(it.pos),
					Reason: "cloud auto-join (provider=...) is not supported: list the servers' addresses; " + strconv.Quote(a) + " is ignored"})
				continue
			}
			keep = append(keep, strings.TrimSpace(a))
		}
		*dst = keep
	}
}

// join returns the server block's join settings, creating them.
func (s *serverBlock) join() *serverJoinBlock {
	if s.Join == nil {
		s.Join = &serverJoinBlock{}
	}
	return s.Join
}

func (a *addressesBlock) section(p string) section {
	return section{path: p, keys: map[string]keyFunc{
		"http": strKey(&a.HTTP, p),
		"rpc":  strKey(&a.RPC, p),
		"serf": strKey(&a.Serf, p),
	}}
}

func (j *serverJoinBlock) section(p string) section {
	return section{path: p, keys: map[string]keyFunc{
		"start_join":     joinListKey(&j.StartJoin, p),
		"retry_join":     joinListKey(&j.RetryJoin, p),
		"retry_interval": durationKey(&j.RetryInterval, p),
		"retry_max":      intKey(&j.RetryMax, p),
	}}
}

func (c *clientBlock) section() section {
	const p = "client"
	return section{path: p, keys: map[string]keyFunc{
		"enabled":                    boolKey(&c.Enabled, p),
		"servers":                    strListKey(&c.Servers, p),
		"node_class":                 strKey(&c.NodeClass, p),
		"node_pool":                  strKey(&c.NodePool, p),
		"alloc_dir":                  strKey(&c.AllocDir, p),
		"state_dir":                  strKey(&c.StateDir, p),
		"network_interface":          strKey(&c.NetworkInterface, p),
		"preferred_address_family":   strKey(&c.PreferredAddressFamily, p),
		"cpu_total_compute":          intKey(&c.CPUTotalCompute, p),
		"memory_total_mb":            intKey(&c.MemoryTotalMB, p),
		"disk_total_mb":              intKey(&c.DiskTotalMB, p),
		"disk_free_mb":               intKey(&c.DiskFreeMB, p),
		"gc_interval":                durationKey(&c.GCInterval, p),
		"gc_max_allocs":              intKey(&c.GCMaxAllocs, p),
		"gc_disk_usage_threshold":    floatKey(&c.GCDiskUsageThreshold, p),
		"gc_inode_usage_threshold":   floatKey(&c.GCInodeUsageThreshold, p),
		"min_dynamic_port":           intKey(&c.MinDynamicPort, p),
		"max_dynamic_port":           intKey(&c.MaxDynamicPort, p),
		"cni_path":                   strKey(&c.CNIPath, p),
		"cni_config_dir":             strKey(&c.CNIConfigDir, p),
		"bridge_network_name":        strKey(&c.BridgeNetworkName, p),
		"bridge_network_subnet":      strKey(&c.BridgeNetworkSubnet, p),
		"bridge_network_subnet_ipv6": strKey(&c.BridgeNetworkSubnetIPv6, p),
		"host_network":               labelledBlocks("host_network", c.decodeHostNetwork),
		"meta": func(d *decoder, it *cfgItem) {
			if !d.unlabelled(p, it) {
				return
			}
			m, _ := d.strMap("client.meta", it.val)
			if c.Meta == nil {
				c.Meta = map[string]string{}
			}
			for k, v := range m {
				c.Meta[k] = v
			}
		},
		"options": c.decodeOptions,
		"artifact": blockKey(func() section { // config_artifact.go
			if c.Artifact == nil {
				c.Artifact = &artifactBlock{}
			}
			return c.Artifact.section()
		}),
		"host_volume": labelledBlocks("host_volume", c.decodeHostVolume), // config_host_volumes.go
		"server_join": blockKey(func() section {
			if c.Join == nil {
				c.Join = &serverJoinBlock{}
			}
			return c.Join.section(p + ".server_join")
		}),
		"template": blockKey(func() section { // config_template.go
			if c.Template == nil {
				c.Template = &templateBlock{}
			}
			return c.Template.section()
		}),
		"reserved": blockKey(func() section {
			if c.Reserved == nil {
				c.Reserved = &reservedBlock{}
			}
			const r = "client.reserved"
			return section{path: r, keys: map[string]keyFunc{
				"cpu":            intKey(&c.Reserved.CPU, r),
				"memory":         intKey(&c.Reserved.Memory, r),
				"disk":           intKey(&c.Reserved.Disk, r),
				"reserved_ports": strKey(&c.Reserved.ReservedPorts, r),
			}}
		}),
	}}
}

// decodeHostNetwork reads one `host_network "NAME" { cidr, interface,
// reserved_ports }` block.
func (c *clientBlock) decodeHostNetwork(d *decoder, name string, pos cfgPos, body *cfgValue) {
	var b struct{ cidr, iface, reserved *string }
	const p = "client.host_network"
	d.decodeSection(section{path: p, keys: map[string]keyFunc{
		"cidr":           strKey(&b.cidr, p),
		"interface":      strKey(&b.iface, p),
		"reserved_ports": strKey(&b.reserved, p),
	}}, body)
	hn := &HostNetworkConfig{Name: name}
	setVal(&hn.CIDR, b.cidr)
	setVal(&hn.Interface, b.iface)
	setVal(&hn.ReservedPorts, b.reserved)
	if c.HostNetworks == nil {
		c.HostNetworks = map[string]*HostNetworkConfig{}
	}
	if _, dup := c.HostNetworks[name]; dup {
		d.errorf(pos, "client host_network %q is defined twice in one file", name)
		return
	}
	c.HostNetworks[name] = hn
}

// Client options drover honours. Nomad's options map is free-form: other
// keys are accepted and ignored with a warning each, as Nomad ignores the
// options it does not know.
const (
	optDriverAllowlist      = "driver.allowlist"
	optDriverDenylist       = "driver.denylist"
	optFingerprintAllowlist = "fingerprint.allowlist"
	optFingerprintDenylist  = "fingerprint.denylist"
	optRawExecEnable        = "driver.raw_exec.enable"
)

// optionAliases maps the options' older names (still read by Nomad) to
// their current ones.
var optionAliases = map[string]string{
	"driver.whitelist":      optDriverAllowlist,
	"driver.blacklist":      optDriverDenylist,
	"fingerprint.whitelist": optFingerprintAllowlist,
	"fingerprint.blacklist": optFingerprintDenylist,
}

// decodeOptions reads `options { "driver.allowlist" = "docker" }`.
func (c *clientBlock) decodeOptions(d *decoder, it *cfgItem) {
	if !d.unlabelled("client", it) {
		return
	}
	m, where := d.strMap("client.options", it.val)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, pos := m[k], where[k]
		name := k
		if alias, ok := optionAliases[k]; ok {
			name = alias
		}
		switch name {
		case optDriverAllowlist, optDriverDenylist, optFingerprintAllowlist, optFingerprintDenylist:
		case optRawExecEnable:
			if _, err := strconv.ParseBool(strings.TrimSpace(v)); err != nil {
				d.errorf(pos, "client.options.%s = %q must be true or false", k, v)
				continue
			}
		default:
			d.warnings = append(d.warnings, ConfigWarning{Key: "client.options." + k, Where: d.where(pos),
				Reason: "drover does not use this client option"})
			continue
		}
		if c.Options == nil {
			c.Options = map[string]string{}
		}
		c.Options[name] = v
	}
}

// decodePlugin reads one `plugin "NAME" { config { ... } }` block.
func (pf *parsedFile) decodePlugin(d *decoder, name string, pos cfgPos, body *cfgValue) {
	if _, dup := pf.plugins[name]; dup {
		d.errorf(pos, "plugin %q is configured twice in one file", name)
		return
	}
	var cfg any = map[string]any{}
	sec := section{path: "plugin", keys: map[string]keyFunc{
		"config": func(d *decoder, it *cfgItem) {
			if !d.unlabelled("plugin", it) {
				return
			}
			bodies := d.bodies("plugin "+strconv.Quote(name)+" config", it.val)
			if len(bodies) == 1 {
				cfg = d.freeform(bodies[0])
			} else if len(bodies) > 1 {
				d.errorf(it.pos, "plugin %q has more than one config block", name)
			}
		},
	}}
	d.decodeSection(sec, body)
	raw, err := json.Marshal(cfg)
	if err != nil {
		d.errorf(pos, "plugin %q config: %v", name, err)
		return
	}
	if pf.plugins == nil {
		pf.plugins = map[string]json.RawMessage{}
	}
	pf.plugins[name] = raw
}

// splitList splits a comma-separated option value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// optionList returns a comma-separated client option as a list.
func (c *ClientConfig) optionList(name string) []string {
	return splitList(c.Options[name])
}

// rawExecOption reports whether the client option driver.raw_exec.enable
// is set, and its value.
func (c *ClientConfig) rawExecOption() (enable, set bool) {
	v, ok := c.Options[optRawExecEnable]
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b, true
}
