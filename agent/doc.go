// Package agent is the drover agent's wiring: the process that runs a
// server, a client (node agent) or both, and serves the HTTP API.
//
// Where it sits in the data flow: the agent reads its configuration,
// decides which parts run, builds them and connects them: a server
// (server_persist.go: raft log, snapshots and server ID under data_dir;
// in-memory in dev mode) that serves its methods on the RPC port; a client
// (its state file under data_dir; the drivers of driver_catalog.go and the
// device plugins of device_catalog.go) that calls the server through an
// rpcapi.Conn: the server in process (late_server.go while a combined
// agent's server elects itself), or rpcclient over the network to
// client.servers; and the HTTP API (package httpapi), given the same Conn,
// the client, and agentInfo (agent_info.go: /v1/agent/self, health, leader
// and peers), which serves the web UI (package ui) beside the API unless
// ui { enabled = false }. Start starts them; Shutdown stops the HTTP API, then the
// client, then the server.
//
// Files: agent.go wires an agent; driver_catalog.go is the catalog of
// built-in drivers (for the client's driver manager, with plugin blocks,
// plugin_dir and the client options driver.allowlist/denylist); config.go
// is the agent's configuration and config_file.go reads its files:
// config_syntax.go parses them (Nomad's HCL 1, or JSON, decided by
// content) into a tree that config_decode.go walks against the schema
// (config_schema.go; the Nomad keys drover ignores, with one warning each,
// are in config_nomad.go; every key is in docs/agent-config.md);
// config_log.go builds the logger (log_json, log_file with rotation,
// syslog); command.go is the `drover agent` command (-state-move-aside,
// signals, leave_on_*) and command_flags.go its flags (Nomad's, each
// mapped to its config key).
package agent
