package agent

import (
	"slices"
	"time"
)

// telemetryBlock is a file's telemetry block (docs/metrics.md).
type telemetryBlock struct {
	CollectionInterval       *time.Duration
	DisableHostname          *bool
	UseNodeName              *bool
	PrometheusMetrics        *bool
	PublishAllocationMetrics *bool
	PublishNodeMetrics       *bool
	PrefixFilter             []string
	FilterDefault            *bool
}

// reasonOtherSink is why the telemetry keys of sinks other than
// Prometheus and the in-memory one are ignored.
const reasonOtherSink = "drover publishes metrics at /v1/metrics (JSON and Prometheus) only; statsd, statsite, Datadog and Circonus sinks are not supported"

// telemetryIgnored are the telemetry keys drover accepts and ignores
// (merged into nomadIgnored).
var telemetryIgnored = map[string]string{
	"statsd_address":                         reasonOtherSink,
	"statsite_address":                       reasonOtherSink,
	"datadog_address":                        reasonOtherSink,
	"datadog_tags":                           reasonOtherSink,
	"circonus_api_token":                     reasonOtherSink,
	"circonus_api_app":                       reasonOtherSink,
	"circonus_api_url":                       reasonOtherSink,
	"circonus_submission_interval":           reasonOtherSink,
	"circonus_submission_url":                reasonOtherSink,
	"circonus_check_id":                      reasonOtherSink,
	"circonus_check_force_metric_activation": reasonOtherSink,
	"circonus_check_instance_id":             reasonOtherSink,
	"circonus_check_search_tag":              reasonOtherSink,
	"circonus_check_display_name":            reasonOtherSink,
	"circonus_check_tags":                    reasonOtherSink,
	"circonus_broker_id":                     reasonOtherSink,
	"circonus_broker_select_tag":             reasonOtherSink,
	"enable_hostname_label":                  reasonNotYet,
	"in_memory_collection_interval":          "the in-memory sink behind /v1/metrics aggregates over 10s and keeps 1m, as Nomad's defaults",
	"in_memory_retention_period":             "the in-memory sink behind /v1/metrics aggregates over 10s and keeps 1m, as Nomad's defaults",
	"disable_dispatched_job_summary_metrics": reasonNotYet,
	"disable_quota_utilization_metrics":      reasonEnterprise,
	"disable_rpc_rate_metrics_labels":        "drover has no RPC rate limits",
	"backwards_compatible_metrics":           "drover publishes only the tagged (labelled) metrics",
	"disable_tagged_metrics":                 "drover publishes only the tagged (labelled) metrics",
}

func (t *telemetryBlock) section() section {
	const p = "telemetry"
	return section{path: p, keys: map[string]keyFunc{
		"collection_interval":        durationKey(&t.CollectionInterval, p),
		"disable_hostname":           boolKey(&t.DisableHostname, p),
		"use_node_name":              boolKey(&t.UseNodeName, p),
		"prometheus_metrics":         boolKey(&t.PrometheusMetrics, p),
		"publish_allocation_metrics": boolKey(&t.PublishAllocationMetrics, p),
		"publish_node_metrics":       boolKey(&t.PublishNodeMetrics, p),
		"prefix_filter":              strListKey(&t.PrefixFilter, p),
		"filter_default":             boolKey(&t.FilterDefault, p),
	}}
}

// mergeTelemetry applies what a file's telemetry block sets.
func (c *Config) mergeTelemetry(t *telemetryBlock) {
	setVal(&c.Telemetry.CollectionInterval, t.CollectionInterval)
	setVal(&c.Telemetry.DisableHostname, t.DisableHostname)
	setVal(&c.Telemetry.UseNodeName, t.UseNodeName)
	setVal(&c.Telemetry.PrometheusMetrics, t.PrometheusMetrics)
	setVal(&c.Telemetry.PublishAllocationMetrics, t.PublishAllocationMetrics)
	setVal(&c.Telemetry.PublishNodeMetrics, t.PublishNodeMetrics)
	if t.PrefixFilter != nil {
		c.Telemetry.PrefixFilter = slices.Clone(t.PrefixFilter)
	}
	if t.FilterDefault != nil {
		v := *t.FilterDefault
		c.Telemetry.FilterDefault = &v
	}
}
