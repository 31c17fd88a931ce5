package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of a cluster of servers: what each server sees of the
// cluster (served by the server called), the raft configuration,
// autopilot and snapshots (served by the leader), and the calls of the
// scheduler workers of every server to the leader's eval broker and plan
// applier.
var (
	// ServerMembers lists the gossip pool's members as the called server
	// sees them.
	ServerMembers = served(read[structs.ServerMembersRequest, structs.ServerMembersResponse]("ServerMembers"))
	// ServerJoin makes the called server join other servers' gossip
	// pool. Idempotent: joining a member again changes nothing.
	ServerJoin = served(idempotent[structs.ServerJoinRequest, structs.ServerJoinResponse]("ServerJoin"))
	// ServerForceLeave makes the gossip pool forget a failed member (and
	// with Prune at once). Idempotent: forgetting it again changes
	// nothing.
	ServerForceLeave = served(idempotent[structs.ForceLeaveRequest, structs.GenericResponse]("ServerForceLeave"))
	// StatusServers lists the region's servers' RPC addresses as the
	// called server sees them; clients refresh their server list with it.
	StatusServers = served(read[structs.StatusServersRequest, structs.StatusServersResponse]("StatusServers"))
	// ClusterStatus tells how the called server stands: the cluster its
	// state belongs to, its raft voters. A server about to bootstrap a
	// cluster asks every other first.
	ClusterStatus = served(read[structs.ClusterStatusRequest, structs.ClusterStatusResponse]("ClusterStatus"))

	// RaftGetConfiguration reads the raft configuration.
	RaftGetConfiguration = read[structs.RaftConfigurationRequest, structs.RaftConfigurationResponse]("RaftGetConfiguration")
	// RaftRemovePeer removes a server from the raft configuration.
	// Idempotent: removing it again finds nothing to remove.
	RaftRemovePeer = idempotent[structs.RaftPeerRemoveRequest, structs.GenericResponse]("RaftRemovePeer")
	// AutopilotGetConfig reads the autopilot configuration.
	AutopilotGetConfig = read[structs.AutopilotConfigRequest, structs.AutopilotConfigResponse]("AutopilotGetConfig")
	// AutopilotSetConfig sets the autopilot configuration (with CAS, only
	// over the given ModifyIndex).
	AutopilotSetConfig = deduplicated[structs.AutopilotSetConfigRequest, structs.AutopilotSetConfigResponse]("AutopilotSetConfig")
	// AutopilotHealth reports the servers' health as the leader sees it.
	AutopilotHealth = read[structs.AutopilotHealthRequest, structs.AutopilotHealthResponse]("AutopilotHealth")
	// SnapshotSave returns an archive of the cluster state.
	SnapshotSave = read[structs.SnapshotSaveRequest, structs.SnapshotSaveResponse]("SnapshotSave")
	// SnapshotRestore replaces the cluster state with an archive's. At
	// most once: a restore undoes every write made since the first.
	SnapshotRestore = atMostOnce[structs.SnapshotRestoreRequest, structs.GenericResponse]("SnapshotRestore")

	// EvalDequeue hands an evaluation of the leader's broker to a worker.
	// At most once: a lost answer leaves the evaluation in flight until
	// its nack timer gives it to another worker.
	EvalDequeue = atMostOnce[structs.EvalDequeueRequest, structs.EvalDequeueResponse]("EvalDequeue")
	// EvalAck acknowledges, or gives back, a dequeued evaluation.
	// Idempotent: the broker ignores a token it no longer holds.
	EvalAck = idempotent[structs.EvalAckRequest, structs.GenericResponse]("EvalAck")
	// PlanSubmit commits a worker's plan through the leader's plan
	// applier. At most once: the worker schedules again on fresh state
	// rather than send it twice.
	PlanSubmit = atMostOnce[structs.PlanSubmitRequest, structs.PlanSubmitResponse]("PlanSubmit")
)

// clusterMethods returns the methods of this file, for All.
func clusterMethods() []*Info {
	return []*Info{
		ServerMembers.info, ServerJoin.info, ServerForceLeave.info, StatusServers.info, ClusterStatus.info,
		RaftGetConfiguration.info, RaftRemovePeer.info, AutopilotGetConfig.info, AutopilotSetConfig.info,
		AutopilotHealth.info, SnapshotSave.info, SnapshotRestore.info,
		EvalDequeue.info, EvalAck.info, PlanSubmit.info,
	}
}
