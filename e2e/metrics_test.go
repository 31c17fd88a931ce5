package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// telemetryConfig is an agent config file that turns every metric on.
const telemetryConfig = `
telemetry {
  collection_interval        = "1s"
  disable_hostname           = true
  prometheus_metrics         = true
  publish_allocation_metrics = true
  publish_node_metrics       = true
}
`

// TestMetricsPrometheus runs a raw_exec task on an agent with telemetry
// on, then parses /v1/metrics?format=prometheus with Prometheus' own text
// parser: the host, allocation, client, broker, plan, raft, job summary,
// runtime and drover metrics are there with Nomad's names and labels. The
// JSON form decodes with Nomad's Go client.
func TestMetricsPrometheus(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "telemetry.hcl", telemetryConfig)
	a := startAgent(t, func(c *exec.Cmd) { c.Args = append(c.Args, "-config", cfg) })
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	job := nomad.NewServiceJob("metrics", "metrics", "global", 50)
	task := nomad.NewTask("t", "raw_exec").
		SetConfig("command", "/bin/sleep").
		SetConfig("args", []string{"300"}).
		Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	var allocID string
	waitFor(t, 60*time.Second, "the allocation to run", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("metrics", false, nil)
		if err != nil || len(allocs) != 1 {
			return false, fmt.Sprintf("allocations: %d, %v", len(allocs), err)
		}
		allocID = allocs[0].ID
		return allocs[0].ClientStatus == "running", "client status " + allocs[0].ClientStatus
	})

	allocLabels := map[string]string{"job": "metrics", "task_group": "g", "task": "t", "alloc_id": allocID, "namespace": "default"}
	var fams map[string]*dto.MetricFamily
	waitFor(t, 60*time.Second, "the allocation's metrics", func() (bool, string) {
		fams = scrape(t, a.addr)
		if m := find(fams["nomad_client_allocs_memory_rss"], allocLabels); m == nil || m.GetGauge().GetValue() <= 0 {
			return false, "no nomad_client_allocs_memory_rss > 0 for the allocation yet"
		}
		if m := find(fams["nomad_client_allocations_running"], nil); m == nil || m.GetGauge().GetValue() != 1 {
			return false, "nomad_client_allocations_running is not 1 yet"
		}
		if m := find(fams["nomad_nomad_job_summary_running"], map[string]string{"job": "metrics", "task_group": "g"}); m == nil || m.GetGauge().GetValue() != 1 {
			return false, "nomad_nomad_job_summary_running is not 1 yet"
		}
		return true, ""
	})

	tests := []struct {
		name   string
		typ    dto.MetricType
		labels map[string]string
	}{
		{"nomad_client_host_memory_total", dto.MetricType_GAUGE, map[string]string{"datacenter": "dc1"}},
		{"nomad_client_host_memory_available", dto.MetricType_GAUGE, nil},
		{"nomad_client_host_cpu_total", dto.MetricType_GAUGE, map[string]string{"cpu": "cpu0"}},
		{"nomad_client_host_disk_size", dto.MetricType_GAUGE, nil},
		{"nomad_client_allocs_memory_rss", dto.MetricType_GAUGE, allocLabels},
		{"nomad_client_allocs_memory_allocated", dto.MetricType_GAUGE, allocLabels},
		{"nomad_client_allocs_cpu_total_percent", dto.MetricType_GAUGE, allocLabels},
		{"nomad_client_allocs_cpu_total_ticks", dto.MetricType_GAUGE, allocLabels},
		{"nomad_client_allocations_running", dto.MetricType_GAUGE, nil},
		{"nomad_client_allocations_pending", dto.MetricType_GAUGE, nil},
		{"nomad_client_unallocated_memory", dto.MetricType_GAUGE, nil},
		{"nomad_nomad_broker_total_ready", dto.MetricType_GAUGE, nil},
		{"nomad_nomad_broker_total_unacked", dto.MetricType_GAUGE, nil},
		{"nomad_nomad_blocked_evals_total_blocked", dto.MetricType_GAUGE, nil},
		{"nomad_nomad_plan_queue_depth", dto.MetricType_GAUGE, nil},
		{"nomad_nomad_plan_submit", dto.MetricType_SUMMARY, nil},
		{"nomad_nomad_plan_apply", dto.MetricType_SUMMARY, nil},
		{"nomad_nomad_job_summary_running", dto.MetricType_GAUGE, map[string]string{"job": "metrics", "task_group": "g", "namespace": "default"}},
		{"nomad_raft_apply", dto.MetricType_COUNTER, nil},
		{"nomad_raft_fsm_apply", dto.MetricType_SUMMARY, nil},
		{"nomad_runtime_num_goroutines", dto.MetricType_GAUGE, nil},
		{"nomad_runtime_alloc_bytes", dto.MetricType_GAUGE, nil},
		{"drover_client_shims", dto.MetricType_GAUGE, nil},
		{"drover_client_restore_time_ms", dto.MetricType_GAUGE, nil},
	}
	for _, tt := range tests {
		f := fams[tt.name]
		if f == nil {
			t.Errorf("%s is missing from the exposition", tt.name)
			continue
		}
		if f.GetType() != tt.typ {
			t.Errorf("%s is a %v, want %v", tt.name, f.GetType(), tt.typ)
		}
		if find(f, tt.labels) == nil {
			t.Errorf("%s has no series labelled %v: %v", tt.name, tt.labels, f.GetMetric())
		}
	}
	if m := find(fams["drover_client_shims"], nil); m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("drover_client_shims = %v, want 1 (one raw_exec task)", m)
	}

	// Every metric the example Grafana dashboard queries is published.
	dash, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`\b(?:nomad|drover)_[a-z_]+[a-z]\b`).FindAllString(string(dash), -1) {
		if fams[name] == nil && name != "drover_overview" {
			t.Errorf("docs/grafana-dashboard.json queries %s, which the agent does not publish", name)
		}
	}

	// The JSON form, as Nomad's Go client reads it: the in-memory sink's
	// last finished 10s interval, so the gauge shows up there later.
	waitFor(t, 60*time.Second, "the allocation's gauge in the JSON metrics", func() (bool, string) {
		sum, _, err := c.Operator().MetricsSummary(nil)
		if err != nil {
			t.Fatalf("GET /v1/metrics with Nomad's client: %v", err)
		}
		for _, g := range sum.Gauges {
			if g.Name == "nomad.client.allocs.memory.rss" && g.DisplayLabels["alloc_id"] == allocID && sum.Timestamp != "" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no nomad.client.allocs.memory.rss gauge for %s in %d gauges at %q", allocID, len(sum.Gauges), sum.Timestamp)
	})
}

// TestMetricsPrometheusDisabled: without telemetry { prometheus_metrics },
// the Prometheus form is a 400 that says what to set; the JSON form works.
func TestMetricsPrometheusDisabled(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	resp, err := http.Get(a.addr + "/v1/metrics?format=prometheus")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "prometheus_metrics = true") {
		t.Errorf("GET ?format=prometheus without prometheus_metrics: %d %q", resp.StatusCode, body)
	}
	resp, err = http.Get(a.addr + "/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"Gauges"`) {
		t.Errorf("GET /v1/metrics: %d %q", resp.StatusCode, body)
	}
}

// scrape reads and parses the agent's Prometheus exposition.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(addr + "/v1/metrics?format=prometheus")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

// find returns the family's first series carrying every label of want.
func find(f *dto.MetricFamily, want map[string]string) *dto.Metric {
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
