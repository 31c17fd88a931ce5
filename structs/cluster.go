package structs

import "time"

// The types of a cluster of servers: membership (serf), the raft
// configuration, autopilot, snapshots, and the calls that let every server's
// scheduler workers take evaluations from the leader and submit plans to it.

// ClusterMetadata identifies a cluster: the first leader writes it through
// raft, so that every server's state holds it. A server whose state names
// another cluster refuses to join this one.
type ClusterMetadata struct {
	ClusterID  string
	CreateTime int64 // unix nanoseconds
}

// ServerMember is a server as a member of the gossip pool, in the shape of
// Nomad's /v1/agent/members.
type ServerMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// ServerMembersRequest asks the answering server for the members it sees.
type ServerMembersRequest struct {
	QueryOptions
}

// ServerMembersResponse lists the gossip pool's members as the answering
// server sees them.
type ServerMembersResponse struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*ServerMember
	QueryMeta
}

// ServerJoinRequest asks a server to join the gossip pool of other
// servers, by their serf addresses ("10.0.0.2:4648").
type ServerJoinRequest struct {
	Addresses []string
}

// ServerJoinResponse says how many servers were joined.
type ServerJoinResponse struct {
	NumJoined int
	Error     string
}

// ForceLeaveRequest asks the cluster to forget a failed member.
type ForceLeaveRequest struct {
	Node  string
	Prune bool
}

// StatusServersRequest asks for the RPC addresses of the region's servers
// (clients refresh their server list with it).
type StatusServersRequest struct {
	QueryOptions
}

// StatusServersResponse lists the RPC addresses of the servers: those
// alive in the gossip pool, else the raft peers.
type StatusServersResponse struct {
	Leader  string
	Servers []string
	QueryMeta
}

// ClusterStatusRequest asks a server how it stands: a server that
// bootstraps a cluster asks every other first, and does not if one of them
// already belongs to a cluster.
type ClusterStatusRequest struct {
	QueryOptions
}

// ClusterStatusResponse is one server's view of its cluster.
type ClusterStatusResponse struct {
	// ServerID is the server's raft ID; Name its serf name.
	ServerID string
	Name     string
	// ClusterID is the cluster its state belongs to; "" before it knows.
	ClusterID string
	// HasState says whether its raft log or snapshots hold anything.
	HasState bool
	// Voters are the raft IDs of the voters in its raft configuration.
	Voters []string
	// Leader is the RPC address of the leader it knows, "" if none.
	Leader          string
	BootstrapExpect int
	// LastIndex and LastTerm are those of its raft log; LastContact how
	// long ago it heard from the leader (0 on the leader).
	LastIndex   uint64
	LastTerm    uint64
	LastContact time.Duration
	Build       string
	QueryMeta
}

// RaftServer is one server of the raft configuration.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftConfigurationRequest asks for the raft configuration.
type RaftConfigurationRequest struct {
	QueryOptions
}

// RaftConfigurationResponse is the raft configuration.
type RaftConfigurationResponse struct {
	Servers []*RaftServer
	Index   uint64
	QueryMeta
}

// RaftPeerRemoveRequest removes a server from the raft configuration, by ID
// or by address.
type RaftPeerRemoveRequest struct {
	ID      string
	Address string
}

// AutopilotConfig is the autopilot configuration, replicated through raft.
type AutopilotConfig struct {
	// CleanupDeadServers removes servers that failed (in serf) from the
	// raft configuration, as long as MinQuorum voters remain.
	CleanupDeadServers bool
	// LastContactThreshold is how long a server may go without contact
	// with the leader and still count as healthy.
	LastContactThreshold time.Duration
	// MaxTrailingLogs is how many entries a server may lag the leader by
	// and still count as healthy.
	MaxTrailingLogs uint64
	// MinQuorum is the number of voters below which dead servers are not
	// removed.
	MinQuorum uint
	// ServerStabilizationTime is how long a server must be healthy before
	// it counts as stable.
	ServerStabilizationTime time.Duration
	CreateIndex             uint64
	ModifyIndex             uint64
}

// DefaultAutopilotConfig returns the configuration used until an operator
// sets one (Nomad's defaults).
func DefaultAutopilotConfig() *AutopilotConfig {
	return &AutopilotConfig{
		CleanupDeadServers:      true,
		LastContactThreshold:    200 * time.Millisecond,
		MaxTrailingLogs:         250,
		ServerStabilizationTime: 10 * time.Second,
	}
}

// AutopilotConfigRequest reads the autopilot configuration.
type AutopilotConfigRequest struct {
	QueryOptions
}

// AutopilotConfigResponse is the autopilot configuration.
type AutopilotConfigResponse struct {
	Config *AutopilotConfig
	QueryMeta
}

// AutopilotSetConfigRequest sets the autopilot configuration; with CAS,
// only over Config.ModifyIndex.
type AutopilotSetConfigRequest struct {
	Config AutopilotConfig
	CAS    bool
	WriteRequest
}

// AutopilotSetConfigResponse says whether the configuration was written.
type AutopilotSetConfigResponse struct {
	Updated bool
	WriteMeta
}

// ServerHealth is a server's health as the leader sees it.
type ServerHealth struct {
	ID          string
	Name        string
	Address     string
	SerfStatus  string
	Version     string
	Leader      bool
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
	Healthy     bool
	Voter       bool
	StableSince time.Time
}

// AutopilotHealthRequest asks the leader for the servers' health.
type AutopilotHealthRequest struct {
	QueryOptions
}

// AutopilotHealthResponse is the servers' health.
type AutopilotHealthResponse struct {
	Healthy          bool
	FailureTolerance int
	Servers          []*ServerHealth
	Leader           string
	Voters           []string
	QueryMeta
}

// SnapshotSaveRequest asks for a snapshot of the cluster state.
type SnapshotSaveRequest struct {
	QueryOptions
}

// SnapshotSaveResponse holds a snapshot archive (see server's
// snapshot_archive.go for its format).
type SnapshotSaveResponse struct {
	Archive []byte
	Index   uint64
	QueryMeta
}

// SnapshotRestoreRequest restores the cluster state from an archive.
type SnapshotRestoreRequest struct {
	Archive []byte
}

// EvalDequeueRequest asks the leader's eval broker for an evaluation to
// schedule, waiting up to Timeout for one.
type EvalDequeueRequest struct {
	Timeout time.Duration
	// Worker names the worker, for the leader's logs.
	Worker string
	// Schedulers are the scheduler types (job types) the worker runs;
	// empty: every type.
	Schedulers []string
}

// EvalDequeueResponse holds the evaluation to schedule (nil when none came
// within the timeout), the token that acknowledges it, and the index the
// worker's state must reach before it schedules it.
type EvalDequeueResponse struct {
	Eval      *Evaluation
	Token     string
	WaitIndex uint64
}

// EvalAckRequest acknowledges (or with Nack, gives back) a dequeued
// evaluation.
type EvalAckRequest struct {
	EvalID string
	Token  string
	Nack   bool
}

// SubmittedPlan is a scheduler's plan as a worker submits it to the
// leader's plan applier: the fields of the scheduler's Plan.
type SubmittedPlan struct {
	EvalID            string
	Job               *Job
	NodeUpdate        map[string][]*Allocation
	NodeAllocation    map[string][]*Allocation
	FailedTGAllocs    map[string]*AllocMetric
	QueuedAllocations map[string]int
	NodePreemptions   map[string][]*Allocation
	Deployments       []*Deployment
	Annotations       *PlanAnnotations
	AllocUpdates      []*Allocation
	FollowupEvals     []*Evaluation
}

// PlanSubmitRequest submits a plan with the evaluation updates to commit
// with it when it is accepted whole.
type PlanSubmitRequest struct {
	Plan  *SubmittedPlan
	Evals []*Evaluation
	// EvalToken is the dequeue token of the plan's evaluation: a plan of
	// an evaluation the broker no longer holds for this worker (its nack
	// timer gave it to another) is refused.
	EvalToken string
}

// PlanSubmitResponse says what the plan applier committed.
type PlanSubmitResponse struct {
	// Index is the raft index of the commit, 0 when nothing was written.
	Index uint64
	// Rejected is true when some placements did not fit the latest state.
	Rejected bool
	// RefreshIndex, set when Rejected, is the index of the leader's state
	// the plan was checked against: the worker schedules again on state
	// at least this new.
	RefreshIndex uint64
	// Placed counts the placements committed.
	Placed int
}
