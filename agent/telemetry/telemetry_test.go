package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape serves t's Prometheus exposition and parses it.
func scrape(t *testing.T, tel *Telemetry) map[string]*dto.MetricFamily {
	t.Helper()
	h := tel.PrometheusHandler()
	if h == nil {
		t.Fatal("no Prometheus handler")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/metrics?format=prometheus", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

func hostGauge(_ context.Context, g *Gauges) {
	g.Set([]string{"client", "host", "memory", "total"}, 42, metrics.Label{Name: "node_id", Value: "n1"})
	g.SetDrover([]string{"client", "shims"}, 3)
}

// TestNames: gauges are named as Nomad's, with or without the hostname,
// drover's own under drover_, and the prefix filter applies.
func TestNames(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		want      []string
		wantGone  []string
		wantLabel string
	}{
		{"disable_hostname", Config{DisableHostname: true},
			[]string{"nomad_client_host_memory_total", "drover_client_shims", "nomad_runtime_num_goroutines"}, nil, "node_id"},
		{"use_node_name", Config{DisableHostname: true, UseNodeName: true, NodeName: "web1"},
			[]string{"nomad_web1_client_host_memory_total", "drover_client_shims"}, []string{"nomad_client_host_memory_total"}, "node_id"},
		{"prefix_filter blocks", Config{DisableHostname: true, PrefixFilter: []string{"-nomad.client"}},
			[]string{"nomad_runtime_num_goroutines"}, []string{"nomad_client_host_memory_total"}, ""},
		{"filter_default false allows only what is listed", Config{DisableHostname: true, FilterDefault: new(false), PrefixFilter: []string{"+nomad.client"}},
			[]string{"nomad_client_host_memory_total"}, []string{"nomad_runtime_num_goroutines"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.PrometheusMetrics = true
			tel, err := New(tt.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			tel.AddSource(SourceFunc(hostGauge))
			tel.Collect(t.Context())
			fams := scrape(t, tel)
			for _, n := range tt.want {
				if fams[n] == nil {
					t.Errorf("%s missing", n)
				}
			}
			for _, n := range tt.wantGone {
				if fams[n] != nil {
					t.Errorf("%s present, want it filtered out", n)
				}
			}
			if tt.wantLabel != "" {
				f := fams[tt.want[0]]
				if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetLabel()[0].GetName() != tt.wantLabel {
					t.Errorf("%s labels: %v", tt.want[0], f)
				}
			}
		})
	}
}

// TestHostnamePrefix: by default (as Nomad) a gauge carries the hostname.
func TestHostnamePrefix(t *testing.T) {
	tel, err := New(Config{PrometheusMetrics: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tel.AddSource(SourceFunc(hostGauge))
	tel.Collect(t.Context())
	host := tel.metricsConfig().HostName
	if host == "" {
		t.Skip("the machine has no hostname")
	}
	found := false
	for name := range scrape(t, tel) {
		if strings.HasPrefix(name, "nomad_") && strings.HasSuffix(name, "_client_host_memory_total") && name != "nomad_client_host_memory_total" {
			found = true
		}
	}
	if !found {
		t.Errorf("no nomad_<hostname>_client_host_memory_total (hostname %q)", host)
	}
}

// TestSummaryJSON: the JSON body is the in-memory sink's summary.
func TestSummaryJSON(t *testing.T) {
	tel, err := New(Config{DisableHostname: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tel.PrometheusHandler() != nil {
		t.Error("a Prometheus handler without prometheus_metrics")
	}
	tel.AddSource(SourceFunc(hostGauge))
	tel.Collect(t.Context())
	out, err := tel.Summary()
	if err != nil {
		t.Fatal(err)
	}
	sum, ok := out.(metrics.MetricsSummary)
	if !ok {
		t.Fatalf("summary is a %T", out)
	}
	found := false
	for _, g := range sum.Gauges {
		if g.Name == "nomad.client.host.memory.total" && g.Value == 42 && g.DisplayLabels["node_id"] == "n1" {
			found = true
		}
	}
	if !found {
		t.Errorf("gauges: %+v", sum.Gauges)
	}
}

// TestCollectorInterval: the collector samples at once, then every
// collection_interval, and Stop ends it.
func TestCollectorInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel, err := New(Config{CollectionInterval: 5 * time.Second, DisableHostname: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n atomic.Int32
		tel.AddSource(SourceFunc(func(context.Context, *Gauges) { n.Add(1) }))
		tel.Start()
		synctest.Wait()
		if got := n.Load(); got != 1 {
			t.Fatalf("after start: %d collections, want 1", got)
		}
		time.Sleep(12 * time.Second) // the bubble's clock: two intervals
		synctest.Wait()
		if got := n.Load(); got != 3 {
			t.Errorf("after 12s: %d collections, want 3", got)
		}
		tel.Stop()
		tel.Stop() // idempotent
		time.Sleep(time.Minute)
		if got := n.Load(); got != 3 {
			t.Errorf("after Stop: %d collections, want 3", got)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"ok", Config{CollectionInterval: time.Second, PrefixFilter: []string{"+nomad.raft", "-nomad.client"}}, ""},
		{"negative interval", Config{CollectionInterval: -time.Second}, "collection_interval"},
		{"filter without sign", Config{PrefixFilter: []string{"nomad.raft"}}, `"nomad.raft" must start with +`},
		{"filter sign only", Config{PrefixFilter: []string{"+"}}, "must start with +"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
			if _, err := New(tt.cfg, nil); err == nil {
				t.Error("New accepted an invalid config")
			}
		})
	}
}
