package client

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/structs"
)

// GC defaults, as Nomad's client defaults.
const (
	DefaultGCInterval            = time.Minute
	DefaultGCMaxAllocs           = 50
	DefaultGCDiskUsageThreshold  = 80.0
	DefaultGCInodeUsageThreshold = 70.0
)

// maxGCRounds bounds the rounds of one collection: each round destroys at
// least one allocation, so this only guards against a statfs that never
// reports relief while candidates remain.
const maxGCRounds = 10_000

// GCConfig configures the garbage collection of terminal allocations on
// the client: their directories and local state are removed. Zero fields
// get the defaults (DefaultGC*).
type GCConfig struct {
	// Interval is how often the client checks whether to collect.
	Interval time.Duration
	// MaxAllocs is how many allocations (of any status) the node keeps
	// before it collects the oldest terminal ones.
	MaxAllocs int
	// DiskUsageThreshold is the percentage of the alloc dir's filesystem
	// in use above which terminal allocations are collected, oldest first.
	DiskUsageThreshold float64
	// InodeUsageThreshold is the same for inodes.
	InodeUsageThreshold float64
}

// withDefaults returns cfg with its zero fields set to the defaults.
func (cfg GCConfig) withDefaults() GCConfig {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultGCInterval
	}
	if cfg.MaxAllocs <= 0 {
		cfg.MaxAllocs = DefaultGCMaxAllocs
	}
	if cfg.DiskUsageThreshold <= 0 {
		cfg.DiskUsageThreshold = DefaultGCDiskUsageThreshold
	}
	if cfg.InodeUsageThreshold <= 0 {
		cfg.InodeUsageThreshold = DefaultGCInodeUsageThreshold
	}
	return cfg
}

// DiskUsage is how full a filesystem is, in percent.
type DiskUsage struct {
	UsedPercent       float64
	InodesUsedPercent float64
}

// gcCandidate is a terminal allocation that may be collected.
type gcCandidate struct {
	ID string
	// FinishedAt is when its last task finished; zero sorts as oldest.
	FinishedAt time.Time
}

// gcReason says why an allocation is collected, for logs.
type gcReason string

const (
	gcReasonCount  gcReason = "too many allocations"
	gcReasonDisk   gcReason = "disk usage above threshold"
	gcReasonInodes gcReason = "inode usage above threshold"
	gcReasonForced gcReason = "forced"
)

// gcSelection is one round's decision: the allocations to destroy, in
// order, and why.
type gcSelection struct {
	IDs    []string
	Reason gcReason
}

// selectGC decides which terminal allocations to destroy in one round. It
// is pure: total is how many live (not yet collected) allocations the node
// has, candidates its terminal ones, usage the alloc dir's filesystem.
// Beyond MaxAllocs the oldest terminal allocations go until the count fits;
// above a usage threshold the oldest one goes, and the caller measures again
// before the next round. It never returns an ID that is not a candidate.
func selectGC(candidates []gcCandidate, total int, usage DiskUsage, cfg GCConfig) gcSelection {
	if len(candidates) == 0 {
		return gcSelection{}
	}
	sorted := slices.Clone(candidates)
	slices.SortFunc(sorted, func(a, b gcCandidate) int {
		if c := a.FinishedAt.Compare(b.FinishedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if excess := total - cfg.MaxAllocs; excess > 0 {
		n := min(excess, len(sorted))
		ids := make([]string, n)
		for i := range n {
			ids[i] = sorted[i].ID
		}
		return gcSelection{IDs: ids, Reason: gcReasonCount}
	}
	switch {
	case usage.UsedPercent >= cfg.DiskUsageThreshold:
		return gcSelection{IDs: []string{sorted[0].ID}, Reason: gcReasonDisk}
	case usage.InodesUsedPercent >= cfg.InodeUsageThreshold:
		return gcSelection{IDs: []string{sorted[0].ID}, Reason: gcReasonInodes}
	}
	return gcSelection{}
}

// gcState is the client's garbage collector: its settings and the
// injected filesystem measurement and ticker.
type gcState struct {
	cfg GCConfig
	// statfs measures the filesystem holding path.
	statfs func(path string) (DiskUsage, error)
	// ticker returns a channel that ticks every d and a function that stops it.
	ticker func(d time.Duration) (<-chan time.Time, func())
}

// GCConfig returns the garbage collection settings in effect (defaults
// filled in).
func (c *Client) GCConfig() GCConfig { return c.gc.cfg }

func newGCState(cfg GCConfig) gcState {
	return gcState{cfg: cfg.withDefaults(), statfs: statfsUsage, ticker: realTicker}
}

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// gcLoop collects garbage every interval until the client stops.
func (c *Client) gcLoop() {
	defer c.wg.Done()
	tick, stop := c.gc.ticker(c.gc.cfg.Interval)
	defer stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick:
			c.collectGarbage(c.ctx)
		}
	}
}

// liveAllocs returns the runners not yet collected and, among them, the
// terminal ones: their Run has returned and their client status is
// complete, failed or lost. A running or pending allocation is never a
// candidate.
func (c *Client) liveAllocs() (live int, terminal map[string]*allocrunner.AllocRunner, cands []gcCandidate) {
	c.allocMu.RLock()
	ars := make([]*allocrunner.AllocRunner, 0, len(c.allocs))
	for _, ar := range c.allocs {
		ars = append(ars, ar)
	}
	c.allocMu.RUnlock()

	terminal = map[string]*allocrunner.AllocRunner{}
	for _, ar := range ars {
		if ar.IsDestroyed() {
			continue
		}
		live++
		cand, ok := gcCandidateOf(ar)
		if !ok {
			continue
		}
		terminal[cand.ID] = ar
		cands = append(cands, cand)
	}
	return live, terminal, cands
}

// gcCandidateOf returns the runner as a candidate if it is terminal.
func gcCandidateOf(ar *allocrunner.AllocRunner) (gcCandidate, bool) {
	select {
	case <-ar.WaitCh():
	default:
		return gcCandidate{}, false // still running its tasks
	}
	st := ar.AllocState()
	switch st.ClientStatus {
	case structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusLost:
	default:
		return gcCandidate{}, false
	}
	var finished time.Time
	for _, ts := range st.TaskStates {
		if ts.FinishedAt.After(finished) {
			finished = ts.FinishedAt
		}
	}
	return gcCandidate{ID: ar.ID(), FinishedAt: finished}, true
}

// collectGarbage runs rounds of selectGC until it selects nothing, and
// returns the IDs of the allocations it destroyed.
func (c *Client) collectGarbage(ctx context.Context) []string {
	var collected []string
	for range maxGCRounds {
		if ctx.Err() != nil {
			break
		}
		live, terminal, cands := c.liveAllocs()
		if len(cands) == 0 {
			break
		}
		usage, err := c.gc.statfs(c.root)
		if err != nil {
			// Without a measurement only the count limit applies.
			c.logger.Warn("gc: could not measure the alloc dir's filesystem", "error", err)
			usage = DiskUsage{}
		}
		sel := selectGC(cands, live, usage, c.gc.cfg)
		if len(sel.IDs) == 0 {
			break
		}
		for _, id := range sel.IDs {
			c.destroyForGC(terminal[id], sel.Reason, usage)
			collected = append(collected, id)
		}
	}
	return collected
}

// CollectAllGarbage destroys every terminal allocation now, whatever the
// limits (`drover system gc`), and returns the IDs it collected, sorted.
// Running and pending allocations are left alone.
func (c *Client) CollectAllGarbage(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, terminal, cands := c.liveAllocs()
	ids := make([]string, 0, len(cands))
	for _, cand := range cands {
		if ctx.Err() != nil {
			break
		}
		c.destroyForGC(terminal[cand.ID], gcReasonForced, DiskUsage{})
		ids = append(ids, cand.ID)
	}
	slices.Sort(ids)
	return ids, ctx.Err()
}

// CollectAlloc destroys one terminal allocation now. It is KindNotFound for
// an unknown one and KindConflict for one that is not terminal.
func (c *Client) CollectAlloc(ctx context.Context, allocID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return err
	}
	if ar.IsDestroyed() {
		return nil
	}
	if _, ok := gcCandidateOf(ar); !ok {
		return structs.NewError(structs.KindConflict,
			"allocation %s is not terminal: stop it first (drover alloc stop)", allocID)
	}
	c.destroyForGC(ar, gcReasonForced, DiskUsage{})
	return nil
}

// destroyForGC destroys the runner: Destroy removes the alloc dir and the
// allocation's StateDB bucket. The runner stays in the client's map, marked
// destroyed, so that the allocation is not run again while the servers
// still list it.
func (c *Client) destroyForGC(ar *allocrunner.AllocRunner, reason gcReason, usage DiskUsage) {
	c.logger.Info("garbage collecting allocation", "alloc_id", ar.ID(), "reason", string(reason),
		"disk_used_percent", usage.UsedPercent, "inodes_used_percent", usage.InodesUsedPercent)
	ar.Destroy()
}
