package allocwatcher

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/structs"
)

// PrevAllocWatcher waits for an allocation (or several) that a new
// allocation replaces, and migrates its ephemeral disk.
type PrevAllocWatcher interface {
	// Wait blocks until the watched allocations are terminal on their
	// client, or ctx is done (it then returns ctx's error).
	Wait(ctx context.Context) error
	// IsWaiting reports whether Wait is blocked right now.
	IsWaiting() bool
	// Migrate moves (or downloads) the previous allocation's data into
	// dest, which must be built. Call it after Wait. It does nothing when
	// the task group's ephemeral disk asks for no migration.
	Migrate(ctx context.Context, dest *allocdir.AllocDir) error
	// IsMigrating reports whether Migrate is running right now.
	IsMigrating() bool
}

// AllocListener receives the latest versions of an allocation, with its
// client status; the channel is closed when the runner goes away.
type AllocListener interface {
	Ch() <-chan *structs.Allocation
	Close()
}

// AllocRunnerMeta is what a local watcher needs of the runner of the
// allocation it watches. The Client adapts its AllocRunners to it.
type AllocRunnerMeta interface {
	// Alloc returns the server-sent allocation.
	Alloc() *structs.Allocation
	// Listen returns a listener of the allocation's versions.
	Listen() AllocListener
	// AllocDir returns the allocation's directory.
	AllocDir() *allocdir.AllocDir
}

// ServerLookup is what a remote watcher needs from the servers.
type ServerLookup interface {
	// AllocByID returns the allocation once the servers' allocations pass
	// minIndex (a blocking query), with the index of the answer. The
	// allocation is nil when the servers no longer know it.
	AllocByID(ctx context.Context, allocID string, minIndex uint64) (*structs.Allocation, uint64, error)
	// NodeHTTPAddr returns the HTTP address ("host:port") of a node's agent.
	NodeHTTPAddr(ctx context.Context, nodeID string) (string, error)
}

// DefaultMaxSnapshotBytes bounds the unpacked size of a snapshot when
// neither the Config nor the group's ephemeral disk says otherwise.
const DefaultMaxSnapshotBytes int64 = 10 << 30

// Config configures the watchers of one new allocation.
type Config struct {
	// Alloc is the new allocation (required).
	Alloc *structs.Allocation
	// PreviousRunner is the runner of Alloc.PreviousAllocation when it runs
	// on this node; nil otherwise.
	PreviousRunner AllocRunnerMeta
	// PreemptedRunners are the runners of Alloc.PreemptedAllocations known
	// on this node, by allocation ID.
	PreemptedRunners map[string]AllocRunnerMeta
	// Servers looks up allocations on other nodes; nil means a previous
	// allocation not on this node is not waited for.
	Servers ServerLookup
	// NodeID is this node's ID.
	NodeID string
	// HTTPClient downloads snapshots; nil uses a client with no timeout
	// (the download is bounded by Migrate's context).
	HTTPClient *http.Client
	// MaxSnapshotBytes bounds a downloaded snapshot's unpacked size; 0 uses
	// twice the group's ephemeral disk size, or DefaultMaxSnapshotBytes.
	MaxSnapshotBytes int64
	// RetryWait is the pause after a failed server lookup; 0 means 1s.
	RetryWait time.Duration
	Logger    *slog.Logger
}

// diskPolicy returns the group's sticky and migrate settings and the task
// names whose local directories move with the data.
func diskPolicy(alloc *structs.Allocation) (sticky, migrate bool, tasks []string, sizeMB int) {
	if alloc == nil || alloc.Job == nil {
		return false, false, nil, 0
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return false, false, nil, 0
	}
	for _, t := range tg.Tasks {
		tasks = append(tasks, t.Name)
	}
	if tg.EphemeralDisk != nil {
		sticky, migrate, sizeMB = tg.EphemeralDisk.Sticky, tg.EphemeralDisk.Migrate, tg.EphemeralDisk.SizeMB
	}
	return sticky, migrate, tasks, sizeMB
}

func (cfg *Config) logger() *slog.Logger {
	if cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return cfg.Logger
}

// NewAllocWatcher returns the watcher of cfg.Alloc's previous allocation:
// a local watcher when PreviousRunner is set, a remote watcher when the
// servers can be asked, and a NoopPrevAllocWatcher when there is no
// previous allocation. Data moves locally when the group's ephemeral disk
// is sticky, and across nodes when it is sticky and migrate.
func NewAllocWatcher(cfg Config) PrevAllocWatcher {
	prevID := cfg.Alloc.PreviousAllocation
	if prevID == "" {
		return NoopPrevAllocWatcher{}
	}
	sticky, migrate, tasks, sizeMB := diskPolicy(cfg.Alloc)
	logger := cfg.logger().With("alloc_id", cfg.Alloc.ID, "previous_alloc", prevID)
	if cfg.PreviousRunner != nil {
		return &localWatcher{
			prevID: prevID, runner: cfg.PreviousRunner, move: sticky || migrate,
			tasks: tasks, logger: logger,
		}
	}
	if cfg.Servers == nil {
		return NoopPrevAllocWatcher{}
	}
	limit := cfg.MaxSnapshotBytes
	if limit <= 0 {
		limit = DefaultMaxSnapshotBytes
		if sizeMB > 0 {
			limit = 2 * int64(sizeMB) << 20
		}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	retry := cfg.RetryWait
	if retry <= 0 {
		retry = time.Second
	}
	return &remoteWatcher{
		prevID: prevID, nodeID: cfg.NodeID, servers: cfg.Servers, hc: hc,
		migrate: sticky && migrate, tasks: tasks, limit: limit, retry: retry, logger: logger,
	}
}

// NewPreemptedAllocWatcher returns a group watcher that waits for every
// allocation in cfg.Alloc.PreemptedAllocations (they run on this node:
// preemption is per node), or a NoopPrevAllocWatcher when it preempts
// nothing. Preempted allocations' data is never migrated. An allocation
// this node does not run is looked up on the servers when they can be
// asked, and otherwise not waited for.
func NewPreemptedAllocWatcher(cfg Config) PrevAllocWatcher {
	ids := cfg.Alloc.PreemptedAllocations
	if len(ids) == 0 {
		return NoopPrevAllocWatcher{}
	}
	logger := cfg.logger().With("alloc_id", cfg.Alloc.ID)
	watchers := make([]PrevAllocWatcher, 0, len(ids))
	for _, id := range ids {
		if r, ok := cfg.PreemptedRunners[id]; ok && r != nil {
			watchers = append(watchers, &localWatcher{prevID: id, runner: r, logger: logger.With("preempted_alloc", id)})
			continue
		}
		if cfg.Servers != nil {
			retry := cfg.RetryWait
			if retry <= 0 {
				retry = time.Second
			}
			watchers = append(watchers, &remoteWatcher{prevID: id, nodeID: cfg.NodeID, servers: cfg.Servers,
				retry: retry, logger: logger.With("preempted_alloc", id)})
		}
	}
	return NewGroupAllocWatcher(watchers...)
}

// NoopPrevAllocWatcher is the watcher of an allocation that replaces
// nothing: it never waits and migrates nothing.
type NoopPrevAllocWatcher struct{}

var _ PrevAllocWatcher = NoopPrevAllocWatcher{}

// Wait returns at once.
func (NoopPrevAllocWatcher) Wait(context.Context) error { return nil }

// IsWaiting returns false.
func (NoopPrevAllocWatcher) IsWaiting() bool { return false }

// Migrate does nothing.
func (NoopPrevAllocWatcher) Migrate(context.Context, *allocdir.AllocDir) error { return nil }

// IsMigrating returns false.
func (NoopPrevAllocWatcher) IsMigrating() bool { return false }
