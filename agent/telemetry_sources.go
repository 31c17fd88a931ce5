package agent

import (
	"context"
	"log/slog"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-io/drover/agent/telemetry"
	"github.com/drover-io/drover/client"
	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// The sources of the agent's gauges (docs/metrics.md lists them all).
// Keys are Nomad's, without the "nomad" service prefix the telemetry
// adds; drover's own go under "drover".

// shimDrivers are the built-in drivers whose tasks a shim process
// supervises (drivers/shared/shim).
var shimDrivers = map[string]bool{"raw_exec": true, "exec": true}

// nodeSource is the part of the client the node and allocation gauges
// read.
type nodeSource interface {
	Node() *structs.Node
	HostStats() (*stats.HostStats, error)
	AllocMetrics() []client.AllocMetric
	AllocTaskStats(allocID string) (map[string]*drivers.TaskResourceUsage, error)
	RestoreStats() (restoreTime time.Duration, allocs int)
}

// clientGauges samples the client: always drover's own (shims, restore),
// the host and the allocation counts with publish_node_metrics, every
// running task's resource use with publish_allocation_metrics.
type clientGauges struct {
	client      nodeSource
	node        bool // publish_node_metrics
	allocations bool // publish_allocation_metrics
	logger      *slog.Logger
}

// Collect implements telemetry.Source.
func (s *clientGauges) Collect(ctx context.Context, g *telemetry.Gauges) {
	n := s.client.Node()
	base := []metrics.Label{
		{Name: "node_id", Value: n.ID},
		{Name: "datacenter", Value: n.Datacenter},
		{Name: "node_class", Value: n.NodeClass},
		{Name: "node_pool", Value: n.NodePool},
	}
	allocs := s.client.AllocMetrics()
	restore, restored := s.client.RestoreStats()
	g.SetDrover([]string{"client", "restore_time_ms"}, float32(restore.Milliseconds()), base...)
	g.SetDrover([]string{"client", "restored_allocs"}, float32(restored), base...)
	shims := 0
	for _, a := range allocs {
		tg := a.Alloc.Job.LookupTaskGroup(a.Alloc.TaskGroup)
		for _, ts := range a.TaskStates {
			if ts.State != structs.TaskStateRunning || tg == nil {
				continue
			}
			if t := tg.LookupTask(ts.Task); t != nil && shimDrivers[t.Driver] {
				shims++
			}
		}
	}
	g.SetDrover([]string{"client", "shims"}, float32(shims), base...)
	if s.node {
		s.hostGauges(g, base)
		s.allocationCounts(g, n, allocs, base)
	}
	if s.allocations {
		for _, a := range allocs {
			if ctx.Err() != nil {
				return
			}
			if a.ClientStatus == structs.AllocClientStatusRunning {
				s.allocGauges(g, a.Alloc)
			}
		}
	}
}

func (s *clientGauges) hostGauges(g *telemetry.Gauges, base []metrics.Label) {
	hs, err := s.client.HostStats()
	if err != nil {
		s.logger.Debug("host stats for metrics", "error", err)
	}
	if hs == nil {
		return
	}
	if m := hs.Memory; m != nil {
		g.Set([]string{"client", "host", "memory", "total"}, float32(m.Total), base...)
		g.Set([]string{"client", "host", "memory", "available"}, float32(m.Available), base...)
		g.Set([]string{"client", "host", "memory", "used"}, float32(m.Used), base...)
		g.Set([]string{"client", "host", "memory", "free"}, float32(m.Free), base...)
	}
	for _, c := range hs.CPU {
		l := append(append([]metrics.Label(nil), base...), metrics.Label{Name: "cpu", Value: c.CPU})
		g.Set([]string{"client", "host", "cpu", "total"}, float32(100-c.Idle), l...)
		g.Set([]string{"client", "host", "cpu", "user"}, float32(c.User), l...)
		g.Set([]string{"client", "host", "cpu", "system"}, float32(c.System), l...)
		g.Set([]string{"client", "host", "cpu", "idle"}, float32(c.Idle), l...)
	}
	if d := hs.AllocDirDisk; d != nil {
		l := append(append([]metrics.Label(nil), base...), metrics.Label{Name: "disk", Value: d.Device})
		g.Set([]string{"client", "host", "disk", "size"}, float32(d.Size), l...)
		g.Set([]string{"client", "host", "disk", "used"}, float32(d.Used), l...)
		g.Set([]string{"client", "host", "disk", "available"}, float32(d.Available), l...)
		g.Set([]string{"client", "host", "disk", "used_percent"}, float32(d.UsedPercent), l...)
		g.Set([]string{"client", "host", "disk", "inodes_percent"}, float32(d.InodesUsedPercent), l...)
	}
	g.Set([]string{"client", "uptime"}, float32(hs.Uptime), base...)
}

// allocationCounts sets nomad.client.allocations.* (by client status) and
// nomad.client.{allocated,unallocated}.{cpu,memory}.
func (s *clientGauges) allocationCounts(g *telemetry.Gauges, n *structs.Node, allocs []client.AllocMetric, base []metrics.Label) {
	var running, pending, terminal int
	var cpu, memMB int64
	for _, a := range allocs {
		switch a.ClientStatus {
		case structs.AllocClientStatusRunning:
			running++
		case structs.AllocClientStatusPending:
			pending++
		default:
			terminal++
		}
		if a.ClientStatus == structs.AllocClientStatusRunning || a.ClientStatus == structs.AllocClientStatusPending {
			if ar := a.Alloc.AllocatedResources; ar != nil {
				for _, tr := range ar.Tasks {
					cpu += tr.Cpu.CpuShares
					memMB += tr.Memory.MemoryMB
				}
			}
		}
	}
	g.Set([]string{"client", "allocations", "running"}, float32(running), base...)
	g.Set([]string{"client", "allocations", "pending"}, float32(pending), base...)
	g.Set([]string{"client", "allocations", "terminal"}, float32(terminal), base...)
	g.Set([]string{"client", "allocated", "cpu"}, float32(cpu), base...)
	g.Set([]string{"client", "allocated", "memory"}, float32(memMB), base...)
	if nr := n.NodeResources; nr != nil {
		g.Set([]string{"client", "unallocated", "cpu"}, float32(nr.Cpu.CpuShares-cpu), base...)
		g.Set([]string{"client", "unallocated", "memory"}, float32(nr.Memory.MemoryMB-memMB), base...)
	}
}

// allocGauges sets nomad.client.allocs.{memory,cpu}.* of each task of a
// running allocation. Reading the stats keeps the task's stats hook
// sampling it (taskrunner/stats_hook.go): with publish_allocation_metrics
// every running task is sampled each second.
func (s *clientGauges) allocGauges(g *telemetry.Gauges, a *structs.Allocation) {
	ts, err := s.client.AllocTaskStats(a.ID)
	if err != nil {
		return // collected meanwhile
	}
	for task, u := range ts {
		if u == nil {
			continue
		}
		l := []metrics.Label{
			{Name: "job", Value: a.JobID},
			{Name: "task_group", Value: a.TaskGroup},
			{Name: "alloc_id", Value: a.ID},
			{Name: "task", Value: task},
			{Name: "namespace", Value: a.Namespace},
		}
		g.Set([]string{"client", "allocs", "memory", "rss"}, float32(u.MemoryRSS), l...)
		g.Set([]string{"client", "allocs", "memory", "cache"}, float32(u.MemoryCache), l...)
		g.Set([]string{"client", "allocs", "memory", "swap"}, float32(u.MemorySwap), l...)
		g.Set([]string{"client", "allocs", "memory", "max_usage"}, float32(u.MemoryMaxUsage), l...)
		g.Set([]string{"client", "allocs", "cpu", "total_percent"}, float32(u.CPUPercent), l...)
		g.Set([]string{"client", "allocs", "cpu", "total_ticks"}, float32(u.CPUTotalTicks), l...)
		if ar := a.AllocatedResources; ar != nil {
			if tr := ar.Tasks[task]; tr != nil {
				g.Set([]string{"client", "allocs", "memory", "allocated"}, float32(tr.Memory.MemoryMB<<20), l...)
				g.Set([]string{"client", "allocs", "cpu", "allocated"}, float32(tr.Cpu.CpuShares), l...)
			}
		}
	}
}

// serverSource is the part of the server its gauges read.
type serverSource interface {
	Metrics() (*server.Metrics, error)
}

// serverGauges samples the server: broker, blocked evaluations, plan
// queue, heartbeats and, on the leader, every job's summary.
type serverGauges struct {
	server serverSource
	logger *slog.Logger
}

// Collect implements telemetry.Source.
func (s *serverGauges) Collect(_ context.Context, g *telemetry.Gauges) {
	m, err := s.server.Metrics()
	if err != nil {
		s.logger.Debug("server metrics", "error", err)
	}
	if m == nil {
		return
	}
	g.Set([]string{"nomad", "broker", "total_ready"}, float32(m.BrokerReady))
	g.Set([]string{"nomad", "broker", "total_unacked"}, float32(m.BrokerUnacked))
	g.Set([]string{"nomad", "broker", "total_pending"}, float32(m.BrokerPending))
	g.Set([]string{"nomad", "broker", "total_waiting"}, float32(m.BrokerWaiting))
	g.Set([]string{"nomad", "blocked_evals", "total_blocked"}, float32(m.Blocked))
	g.Set([]string{"nomad", "plan", "queue_depth"}, float32(m.PlanQueueDepth))
	g.Set([]string{"nomad", "heartbeat", "active"}, float32(m.HeartbeatsActive))
	for _, js := range m.JobSummaries {
		for tg, sum := range js.Summary {
			l := []metrics.Label{
				{Name: "job", Value: js.JobID},
				{Name: "task_group", Value: tg},
				{Name: "namespace", Value: js.Namespace},
			}
			g.Set([]string{"nomad", "job_summary", "queued"}, float32(sum.Queued), l...)
			g.Set([]string{"nomad", "job_summary", "complete"}, float32(sum.Complete), l...)
			g.Set([]string{"nomad", "job_summary", "failed"}, float32(sum.Failed), l...)
			g.Set([]string{"nomad", "job_summary", "running"}, float32(sum.Running), l...)
			g.Set([]string{"nomad", "job_summary", "starting"}, float32(sum.Starting), l...)
			g.Set([]string{"nomad", "job_summary", "lost"}, float32(sum.Lost), l...)
			g.Set([]string{"nomad", "job_summary", "unknown"}, float32(sum.Unknown), l...)
		}
	}
}

// setupTelemetry builds the agent's metric sinks from its telemetry block
// and makes them go-metrics' process-wide default, for raft's metrics.
func (a *Agent) setupTelemetry() error {
	cfg := a.cfg.Telemetry
	cfg.NodeName = a.cfg.NodeName
	t, err := telemetry.New(cfg, a.logger.With("component", "telemetry"))
	if err != nil {
		return err
	}
	if err := t.InstallGlobal(); err != nil {
		return err
	}
	a.telemetry = t
	return nil
}

// startTelemetry adds the sources of what the agent runs and starts the
// collector; teardown stops it.
func (a *Agent) startTelemetry() {
	cfg := a.telemetry.Config()
	if a.server != nil {
		a.telemetry.AddSource(&serverGauges{server: a.server, logger: a.logger})
	}
	if a.client != nil {
		a.telemetry.AddSource(&clientGauges{client: a.client, node: cfg.PublishNodeMetrics,
			allocations: cfg.PublishAllocationMetrics, logger: a.logger})
	}
	a.telemetry.Start()
}
