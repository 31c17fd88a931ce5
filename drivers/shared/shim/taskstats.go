package shim

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// StreamStats samples the task's resource use every interval (the first
// sample at once) and sends it, converted with mhz (the host's CPU clock,
// see HostCPUMHz), on the returned channel until ctx is done or the task
// exits; then it closes the channel. This is a driver's TaskStats: the
// goroutine it starts is owned by ctx. A sample that fails otherwise (a
// shim busy or briefly unreachable) is skipped and its error handed to
// skipped, when not nil. interval must be positive.
func (h *Handle) StreamStats(ctx context.Context, interval time.Duration, mhz float64, skipped func(error)) <-chan *drivers.TaskResourceUsage {
	ch := make(chan *drivers.TaskResourceUsage)
	go func() {
		defer close(ch)
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			u, err := h.Stats(ctx)
			switch {
			case errors.Is(err, ErrTaskExited), errors.Is(err, ErrShimDied), ctx.Err() != nil:
				return
			case err != nil:
				if skipped != nil {
					skipped(err)
				}
			default:
				select {
				case ch <- u.ResourceUsage(mhz):
				case <-ctx.Done():
					return
				}
			}
			timer.Reset(interval)
		}
	}()
	return ch
}

// ResourceUsage converts a sample to the driver SDK's value; mhz is the
// host's CPU clock. CPUPercent is of one core; CPUTotalTicks is the MHz
// used (CPUPercent of the host's clock). Pids is not filled in: samples
// are of the task as a whole.
func (u *Usage) ResourceUsage(mhz float64) *drivers.TaskResourceUsage {
	return &drivers.TaskResourceUsage{
		Timestamp:      u.Timestamp.UnixNano(),
		CPUPercent:     u.CPUPercent,
		CPUTotalTicks:  u.CPUPercent / 100 * mhz,
		MemoryRSS:      u.RSSBytes,
		MemoryCache:    u.MemoryCacheBytes,
		MemorySwap:     u.MemorySwapBytes,
		MemoryMaxUsage: u.MemoryMaxUsageBytes,
	}
}

// HostCPUMHz returns the first CPU's clock in MHz from /proc/cpuinfo, or 0.
func HostCPUMHz() float64 {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return mhz
			}
		}
	}
	return 0
}
