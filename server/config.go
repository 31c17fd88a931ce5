package server

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/keyring"
)

// Defaults of Config.
const (
	DefaultHeartbeatTTL = 10 * time.Second
	DefaultRegion       = "global"
	DefaultDatacenter   = "dc1"
	// DefaultJobMaxCount is the default of Config.JobMaxCount: ten times
	// the 1,000-allocation jobs of the benchmarks.
	DefaultJobMaxCount = 10000
	// DefaultEvalTimeout is the default of Config.EvalTimeout. Nomad's
	// eval_nack_timeout has the same default.
	DefaultEvalTimeout = 60 * time.Second
)

// Config configures a Server. The zero value (plus a NodeName) runs a
// single in-memory server as in dev mode.
type Config struct {
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// NodeName names this server; it is also its raft ID and, with the
	// in-memory transport, its raft address.
	NodeName string
	// RaftID is the server's raft ID; empty uses NodeName. A persistent
	// agent sets a stable ID kept under its data_dir, so that a renamed
	// host still finds itself in the raft configuration.
	RaftID     string
	Region     string
	Datacenter string
	// HeartbeatTTL is how long a client may stay silent before its node is
	// marked down.
	HeartbeatTTL time.Duration
	// NumWorkers is the number of evaluation workers (the agent's
	// server.num_schedulers). 0 runs one per CPU core; a negative value
	// runs none, so that this server makes no scheduling decisions and
	// evaluations wait in the broker (Nomad's num_schedulers = 0).
	NumWorkers int
	// JobMaxCount bounds the allocations a job may ask for: each task
	// group's count, and their sum (server.job_max_count). 0 uses
	// DefaultJobMaxCount.
	JobMaxCount int
	// EvalTimeout bounds how long a worker may spend on one evaluation
	// (server.eval_nack_timeout); past it the scheduling pass is cancelled
	// and the evaluation failed with the reason. 0 uses DefaultEvalTimeout.
	EvalTimeout time.Duration
	// Clock drives heartbeat timers and timestamps; nil uses the wall clock.
	Clock Clock
	// KEK is the key-encryption key that wraps the keyring's root keys
	// (package keyring); nil makes one in memory, which suits only a
	// server whose state is in memory too. A persistent agent loads it
	// from <data_dir>/server/keyring.kek.
	KEK *keyring.KEK
	// TaskConfigs checks the driver config blocks of submitted jobs
	// against the drivers' schemas; nil checks none (the clients check
	// them when tasks start).
	TaskConfigs TaskConfigValidator

	// Raft storage and transport. Nil values use in-memory ones (dev
	// mode); a persistent agent sets a bbolt log store and file snapshots.
	LogStore      raft.LogStore
	StableStore   raft.StableStore
	SnapshotStore raft.SnapshotStore
	Transport     raft.Transport
	// RaftConfig overrides the raft configuration; nil uses fast dev
	// timeouts suited to a single server.
	RaftConfig *raft.Config
}

// Clock is the server's source of time.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable timer made by a Clock.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

func (c *Config) withDefaults() Config {
	out := *c
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.NodeName == "" {
		out.NodeName = "server-1"
	}
	if out.Region == "" {
		out.Region = DefaultRegion
	}
	if out.Datacenter == "" {
		out.Datacenter = DefaultDatacenter
	}
	if out.HeartbeatTTL <= 0 {
		out.HeartbeatTTL = DefaultHeartbeatTTL
	}
	switch {
	case out.NumWorkers == 0:
		out.NumWorkers = runtime.NumCPU()
	case out.NumWorkers < 0:
		out.NumWorkers = 0
	}
	if out.JobMaxCount <= 0 {
		out.JobMaxCount = DefaultJobMaxCount
	}
	if out.EvalTimeout <= 0 {
		out.EvalTimeout = DefaultEvalTimeout
	}
	if out.Clock == nil {
		out.Clock = realClock{}
	}
	return out
}
