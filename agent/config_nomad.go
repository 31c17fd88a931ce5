package agent

import "strings"

// Reasons shared by several ignored keys.
const (
	reasonNotVoting   = "drover servers are all voters: non-voting servers and redundancy zones are not supported"
	reasonRaftTuning  = "raft tuning is not configurable yet"
	reasonNoConsul    = "drover has no Consul integration"
	reasonNoVault     = "drover has no Vault integration"
	reasonNoCSI       = "drover has no CSI volume support"
	reasonNoIdentity  = "drover has no workload identity, ACL tokens or keyring yet"
	reasonEnterprise  = "a Nomad Enterprise feature that drover does not have"
	reasonNoHostVols  = "drover has static host volumes only (client host_volume blocks), no dynamic ones"
	reasonNoBridge    = "drover's bridge network has hairpin mode always on, and ports bind on their host network's address"
	reasonPluginPorts = "drover's plugins and task shims talk over unix sockets, not TCP ports"
	reasonNotYet      = "drover does not support this setting yet"
)

// nomadIgnored lists, by section path, the keys of Nomad's agent
// configuration that drover accepts and ignores, with the reason the
// warning gives. A Nomad file using them starts drover with one warning
// line per key; a key that is neither here nor in the schema
// (config_schema.go) is an error. A whole ignored block (consul, vault,
// tls, ...) is one key here: its contents are not checked.
var nomadIgnored = map[string]map[string]string{
	"client.template": {
		"consul_retry": reasonNoConsul,
		"vault_retry":  reasonNoVault,
		"max_stale":    "templates read variables from the servers' leader; stale reads are not configurable yet",
	},
	"": {
		"audit":                     reasonEnterprise,
		"consul":                    reasonNoConsul,
		"eventlog":                  "the Windows event log is not supported",
		"http_api_response_headers": "custom HTTP API response headers are not supported yet",
		"keyring":                   reasonNoIdentity,
		"limits":                    "HTTP and RPC connection limits are not enforced yet",
		"reporting":                 reasonEnterprise,
		"rpc":                       "RPC connection tuning does not apply to drover's RPC transport",
		"sentinel":                  reasonEnterprise,
		"vault":                     reasonNoVault,
	},
	"telemetry": telemetryIgnored, // config_telemetry.go
	"tls":       tlsIgnored,       // config_tls.go
	"acl": {
		"replication_token":        "drover runs one region: there is nothing to replicate",
		"token_min_expiration_ttl": "token expiry is bounded by drover's fixed limits (1 minute to 24 hours)",
		"token_max_expiration_ttl": "token expiry is bounded by drover's fixed limits (1 minute to 24 hours)",
	},
	"ui": {
		"content_security_policy": "the web UI's Content-Security-Policy is fixed (see docs/ui.md)",
		"consul":                  reasonNoConsul,
		"vault":                   reasonNoVault,
		"label":                   "the web UI shows no custom label yet",
	},
	"plugin": {
		"args": "drover does not pass arguments to plugins",
	},
	"server": {
		"authoritative_region":          "drover runs one region",
		"client_introduction":           reasonNoIdentity,
		"data_dir":                      "drover keeps the server's state under the top-level data_dir",
		"protocol_version":              reasonRaftTuning,
		"raft_protocol":                 reasonRaftTuning,
		"raft_logstore":                 reasonRaftTuning,
		"raft_boltdb":                   reasonRaftTuning,
		"raft_snapshot_threshold":       reasonRaftTuning,
		"raft_snapshot_interval":        reasonRaftTuning,
		"raft_trailing_logs":            reasonRaftTuning,
		"enabled_schedulers":            "every scheduler (service, batch, system) is always enabled",
		"csi_volume_claim_gc_interval":  reasonNoCSI,
		"csi_volume_claim_gc_threshold": reasonNoCSI,
		"csi_plugin_gc_threshold":       reasonNoCSI,
		"acl_token_gc_threshold":        reasonNoIdentity,
		"root_key_gc_interval":          reasonNoIdentity,
		"root_key_gc_threshold":         reasonNoIdentity,
		"root_key_rotation_threshold":   reasonNoIdentity,
		"oidc_issuer":                   reasonNoIdentity,
		"failover_heartbeat_ttl":        "heartbeat TTLs after a leader election are not configurable yet",
		"rejoin_after_leave":            "a drover server always rejoins the servers it knew when it restarts",
		"non_voting_server":             reasonNotVoting,
		"redundancy_zone":               reasonNotVoting,
		"upgrade_version":               reasonNotVoting,
		"default_scheduler_config":      "set the scheduler configuration with `drover operator scheduler set-config`",
		"plan_rejection_tracker":        reasonNotYet,
		"enable_event_broker":           "the event stream is always on (docs/events.md)",
		"event_buffer_size":             "the event stream keeps the events of the last 4,096 raft entries (docs/events.md)",
		"license_path":                  reasonEnterprise,
		"search":                        "drover has no search API yet",
		"deploy_query_rate_limit":       reasonNotYet,
		"job_default_priority":          reasonNotYet,
		"job_max_priority":              reasonNotYet,
		"job_max_source_size":           reasonNotYet,
		"job_tracked_versions":          reasonNotYet,
		"start_timeout":                 reasonNotYet,
		"log_file":                      "drover logs to the agent's log_file",
		"non_production":                reasonNotYet,
	},
	"client": {
		"alloc_mounts_dir":                   reasonNotYet,
		"host_volumes_dir":                   reasonNoHostVols,
		"host_volume_plugin_dir":             reasonNoHostVols,
		"common_plugin_dir":                  reasonNoCSI,
		"chroot_env":                         `set chroot_env in plugin "exec" { config { chroot_env = {...} } } instead`,
		"network_speed":                      "drover does not schedule network bandwidth",
		"cpu_disable_dmidecode":              "drover does not run dmidecode",
		"reservable_cores":                   reasonNotYet,
		"max_kill_timeout":                   reasonNotYet,
		"client_max_port":                    reasonPluginPorts,
		"client_min_port":                    reasonPluginPorts,
		"gc_parallel_destroys":               reasonNotYet,
		"gc_volumes_on_node_gc":              reasonNoHostVols,
		"no_host_uuid":                       "node IDs are random and kept in the client state, never derived from the host",
		"disable_remote_exec":                "drover has no alloc exec yet",
		"bridge_network_hairpin_mode":        reasonNoBridge,
		"bind_wildcard_default_host_network": reasonNoBridge,
		"cgroup_parent":                      reasonNotYet,
		"nomad_service_discovery":            "drover has no service discovery yet",
		"drain_on_shutdown":                  "the agent does not drain its node when it stops: run drover node drain -enable -self first",
		"users":                              reasonNotYet,
		"node_max_allocs":                    reasonNotYet,
		"log_file":                           "drover logs to the agent's log_file",
		"fingerprint":                        "cloud fingerprinters are not run; use options { \"fingerprint.denylist\" = ... } to select fingerprinters",
		"default_ineligible":                 reasonNotYet,
		"intro_token":                        reasonNoIdentity,
	},
	"client.artifact": {
		"gcs_timeout":               "drover has no GCS getter",
		"s3_timeout":                "drover has no S3 getter",
		"hg_timeout":                "drover has no Mercurial getter",
		"set_environment_variables": "getters run inside the agent, with its environment",
	},
	"client.reserved": {
		"cores": reasonNotYet,
	},
}

// ignoredReason returns why drover ignores a Nomad setting, by its path
// ("consul.address" is ignored because "consul" is).
func ignoredReason(path string) (string, bool) {
	section := ""
	rest := path
	for {
		key, tail, more := strings.Cut(rest, ".")
		if reason, ok := nomadIgnored[section][key]; ok {
			return reason, true
		}
		if !more {
			return "", false
		}
		section = dotted(section, key)
		rest = tail
	}
}
