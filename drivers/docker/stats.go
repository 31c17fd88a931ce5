package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/api/types/container"

	"github.com/drover-io/drover/plugins/drivers"
)

// statsJSON is a stats stream document.
type statsJSON = container.StatsResponse

// TaskStats streams the container's resource usage, at most once per
// interval (the daemon samples once a second), until ctx is done or the
// container stops.
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("task stats: %w", err)
	}
	body, err := d.client.containerStats(ctx, t.containerID)
	if err != nil {
		return nil, fmt.Errorf("task stats %q: %w", t.cfg.Name, err)
	}
	ch := make(chan *drivers.TaskResourceUsage)
	go func() {
		defer close(ch)
		defer body.Close()
		copyStats(ctx, body, ch, interval)
	}()
	return ch, nil
}

// copyStats decodes stats documents from r and sends one per interval.
func copyStats(ctx context.Context, r io.Reader, ch chan<- *drivers.TaskResourceUsage, interval time.Duration) {
	dec := json.NewDecoder(r)
	var last time.Time
	for {
		var s statsJSON
		if err := dec.Decode(&s); err != nil {
			return // the stream ended: ctx done or container stopped
		}
		if s.Read.IsZero() || s.Read.Year() <= 1 {
			continue // a stopped container's empty sample
		}
		if !last.IsZero() && s.Read.Sub(last) < interval {
			continue
		}
		last = s.Read
		select {
		case ch <- convertStats(&s):
		case <-ctx.Done():
			return
		}
	}
}

// convertStats maps a Docker sample to the SDK's. Memory figures are read
// from cgroup v1 names (rss, cache) or, failing those, v2 ones (anon,
// file).
func convertStats(s *statsJSON) *drivers.TaskResourceUsage {
	u := &drivers.TaskResourceUsage{
		Timestamp:      s.Read.UnixNano(),
		MemoryMaxUsage: s.MemoryStats.MaxUsage,
	}
	m := s.MemoryStats.Stats
	if v, ok := m["rss"]; ok {
		u.MemoryRSS = v
	} else if v, ok := m["anon"]; ok {
		u.MemoryRSS = v
	}
	if v, ok := m["cache"]; ok {
		u.MemoryCache = v
	} else if v, ok := m["file"]; ok {
		u.MemoryCache = v
	}
	u.MemorySwap = m["swap"]
	if u.MemoryRSS == 0 && s.MemoryStats.Usage > u.MemoryCache {
		u.MemoryRSS = s.MemoryStats.Usage - u.MemoryCache
	}
	cpus := float64(s.CPUStats.OnlineCPUs)
	if cpus == 0 {
		cpus = float64(len(s.CPUStats.CPUUsage.PercpuUsage))
	}
	cpuDelta := float64(s.CPUStats.CPUUsage.TotalUsage) - float64(s.PreCPUStats.CPUUsage.TotalUsage)
	sysDelta := float64(s.CPUStats.SystemUsage) - float64(s.PreCPUStats.SystemUsage)
	if s.PreCPUStats.SystemUsage > 0 && cpuDelta > 0 && sysDelta > 0 {
		u.CPUPercent = cpuDelta / sysDelta * cpus * 100
	}
	return u
}
