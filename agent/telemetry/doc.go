// Package telemetry is the agent's metrics: the sinks that keep what the
// agent measures (an in-memory sink for GET /v1/metrics, a Prometheus
// registry for ?format=prometheus), the metrics.Metrics that names them as
// Nomad does (the "nomad" service prefix, the hostname unless
// disable_hostname), and the collector that samples the agent's gauges at
// the telemetry block's collection_interval.
//
// Where it sits in the data flow: the agent builds a Telemetry from its
// telemetry block, hands it sources (runtime, host, allocations, server
// broker, plan queue and job summaries: agent/telemetry_sources.go), the
// server its timers (plan submit/evaluate/apply) and the HTTP API its
// handlers. hashicorp/raft emits to go-metrics' process-wide default
// instance, so a Telemetry also installs itself there (see Install).
//
// Metrics nobody enabled cost nothing: allocation metrics are only read
// when publish_allocation_metrics is set, because reading a task's stats
// keeps its driver sampling it (client/allocrunner/taskrunner/stats_hook.go).
package telemetry
