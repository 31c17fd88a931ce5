package agent

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/agent/telemetry"
	"github.com/drover-io/drover/client"
	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// fakeNode is a client with n running raw_exec allocations and one
// pending one; it counts the task stats reads.
type fakeNode struct {
	node   *structs.Node
	allocs []client.AllocMetric

	mu    sync.Mutex // guards the field below
	reads map[string]int
}

func newFakeNode(n int) *fakeNode {
	job := &structs.Job{ID: "web", Namespace: "default", TaskGroups: []*structs.TaskGroup{
		{Name: "g", Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec"}}},
	}}
	f := &fakeNode{
		node: &structs.Node{ID: "node-1", Datacenter: "dc1", NodePool: "default",
			NodeResources: &structs.NodeResources{Cpu: structs.NodeCpuResources{CpuShares: 100000}, Memory: structs.NodeMemoryResources{MemoryMB: 1 << 20}}},
		reads: map[string]int{},
	}
	res := &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
		"t": {Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 64}}}}
	for i := range n + 1 {
		status, task := structs.AllocClientStatusRunning, structs.TaskStateRunning
		if i == n {
			status, task = structs.AllocClientStatusPending, structs.TaskStatePending
		}
		a := &structs.Allocation{ID: fmt.Sprintf("alloc-%04d", i), Namespace: "default", JobID: "web", TaskGroup: "g", Job: job, AllocatedResources: res}
		f.allocs = append(f.allocs, client.AllocMetric{Alloc: a, ClientStatus: status, TaskStates: []allocrunner.TaskStatus{{Task: "t", State: task}}})
	}
	return f
}

func (f *fakeNode) Node() *structs.Node { return f.node }
func (f *fakeNode) HostStats() (*stats.HostStats, error) {
	return &stats.HostStats{Memory: &stats.MemoryStats{Total: 8 << 30, Available: 4 << 30, Used: 3 << 30, Free: 1 << 30},
		CPU: []*stats.CPUStats{{CPU: "cpu0", User: 10, System: 5, Idle: 85}}, Uptime: 100}, nil
}
func (f *fakeNode) AllocMetrics() []client.AllocMetric { return f.allocs }
func (f *fakeNode) AllocTaskStats(id string) (map[string]*drivers.TaskResourceUsage, error) {
	f.mu.Lock()
	f.reads[id]++
	f.mu.Unlock()
	return map[string]*drivers.TaskResourceUsage{"t": {MemoryRSS: 1 << 20, CPUPercent: 1.5, CPUTotalTicks: 30}}, nil
}
func (f *fakeNode) RestoreStats() (time.Duration, int) { return 1500 * time.Millisecond, 2 }

func (f *fakeNode) totalReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.reads {
		n += r
	}
	return n
}

type fakeServer struct{ m *server.Metrics }

func (f fakeServer) Metrics() (*server.Metrics, error) { return f.m, nil }

func exposition(t testing.TB, tel *telemetry.Telemetry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	tel.PrometheusHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/metrics?format=prometheus", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d", rec.Code)
	}
	return rec.Body.String()
}

// TestClientGauges: node metrics only with publish_node_metrics; task
// stats are read (which keeps their drivers sampling) only with
// publish_allocation_metrics, and only of running allocations.
func TestClientGauges(t *testing.T) {
	tests := []struct {
		name           string
		node, allocs   bool
		wantReads      int
		want, wantNone []string
	}{
		{"nothing published", false, false, 0,
			[]string{`drover_client_shims{datacenter="dc1",node_class="",node_id="node-1",node_pool="default"} 2`, `drover_client_restore_time_ms{`},
			[]string{"nomad_client_host_memory_total", "nomad_client_allocs_memory_rss"}},
		{"node metrics", true, false, 0,
			[]string{`nomad_client_host_memory_total{datacenter="dc1",node_class="",node_id="node-1",node_pool="default"} 8.589934592e+09`,
				`nomad_client_host_cpu_total{cpu="cpu0",`, `nomad_client_allocations_running{`, `nomad_client_allocations_pending{`,
				`nomad_client_allocated_memory{datacenter="dc1",node_class="",node_id="node-1",node_pool="default"} 192`},
			[]string{"nomad_client_allocs_memory_rss"}},
		{"allocation metrics", false, true, 2,
			[]string{`nomad_client_allocs_memory_rss{alloc_id="alloc-0000",job="web",namespace="default",task="t",task_group="g"} 1.048576e+06`,
				`nomad_client_allocs_cpu_total_percent{alloc_id="alloc-0001",`, `nomad_client_allocs_memory_allocated{alloc_id="alloc-0001",`},
			[]string{"nomad_client_host_memory_total", `alloc_id="alloc-0002"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeNode(2)
			tel, err := telemetry.New(telemetry.Config{DisableHostname: true, PrometheusMetrics: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tel.AddSource(&clientGauges{client: f, node: tt.node, allocations: tt.allocs, logger: discardLogger()})
			tel.Collect(t.Context())
			if got := f.totalReads(); got != tt.wantReads {
				t.Errorf("task stats reads = %d, want %d", got, tt.wantReads)
			}
			body := exposition(t, tel)
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("exposition lacks %s", w)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(body, w) {
					t.Errorf("exposition has %s", w)
				}
			}
		})
	}
}

// TestServerGauges: broker, blocked, plan queue and job summaries.
func TestServerGauges(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{DisableHostname: true, PrometheusMetrics: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tel.AddSource(&serverGauges{server: fakeServer{&server.Metrics{Leader: true, BrokerReady: 3, BrokerUnacked: 1, Blocked: 2, PlanQueueDepth: 4,
		JobSummaries: []*structs.JobSummary{{JobID: "web", Namespace: "default", Summary: map[string]structs.TaskGroupSummary{"g": {Running: 5, Queued: 1}}}}}},
		logger: discardLogger()})
	tel.Collect(t.Context())
	body := exposition(t, tel)
	for _, w := range []string{
		"nomad_nomad_broker_total_ready 3", "nomad_nomad_broker_total_unacked 1", "nomad_nomad_blocked_evals_total_blocked 2",
		"nomad_nomad_plan_queue_depth 4", `nomad_nomad_job_summary_running{job="web",namespace="default",task_group="g"} 5`,
		`nomad_nomad_job_summary_queued{job="web",namespace="default",task_group="g"} 1`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("exposition lacks %s", w)
		}
	}
}

// BenchmarkScrape1000Allocs: one Prometheus scrape of an agent publishing
// the metrics of 1,000 running allocations (sampled beforehand by the
// collector, as in an agent).
func BenchmarkScrape1000Allocs(b *testing.B) {
	f := newFakeNode(1000)
	tel, err := telemetry.New(telemetry.Config{DisableHostname: true, PrometheusMetrics: true, PublishNodeMetrics: true, PublishAllocationMetrics: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	tel.AddSource(&clientGauges{client: f, node: true, allocations: true, logger: discardLogger()})
	tel.Collect(b.Context())
	h := tel.PrometheusHandler()
	req := httptest.NewRequest(http.MethodGet, "/v1/metrics?format=prometheus", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := &discardWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
	}
}

// BenchmarkCollect1000Allocs: one collection of the gauges of 1,000
// running allocations (the task stats reads are fakes here).
func BenchmarkCollect1000Allocs(b *testing.B) {
	f := newFakeNode(1000)
	tel, err := telemetry.New(telemetry.Config{DisableHostname: true, PrometheusMetrics: true, PublishNodeMetrics: true, PublishAllocationMetrics: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	tel.AddSource(&clientGauges{client: f, node: true, allocations: true, logger: discardLogger()})
	b.ReportAllocs()
	for b.Loop() {
		tel.Collect(b.Context())
	}
}

type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return io.Discard.Write(p) }
func (w *discardWriter) WriteHeader(int)             {}
