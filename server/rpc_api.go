package server

import (
	"context"

	"github.com/drover-io/drover/rpcapi"
)

// newHandlers binds every method declared in rpcapi to its implementation
// on s; a new method is one line here (rpc_api_test.go checks that none is
// missing).
func (s *Server) newHandlers() *rpcapi.Handlers {
	h := rpcapi.NewHandlers()
	// The client's methods.
	rpcapi.Handle(h, rpcapi.NodeRegister, s.NodeRegister)
	rpcapi.Handle(h, rpcapi.NodeUpdateStatus, s.NodeUpdateStatus)
	rpcapi.Handle(h, rpcapi.NodeGetClientAllocs, s.NodeGetClientAllocs)
	rpcapi.Handle(h, rpcapi.AllocGetAllocs, s.AllocGetAllocs)
	rpcapi.Handle(h, rpcapi.NodeUpdateAlloc, s.NodeUpdateAlloc)
	rpcapi.Handle(h, rpcapi.AllocRestartLease, s.AllocRestartLease)
	rpcapi.Handle(h, rpcapi.NodeGet, s.NodeGet)
	// The methods behind the HTTP API.
	rpcapi.Handle(h, rpcapi.JobRegister, s.JobRegister)
	rpcapi.Handle(h, rpcapi.JobDeregister, s.JobDeregister)
	rpcapi.Handle(h, rpcapi.JobGet, s.JobGet)
	rpcapi.Handle(h, rpcapi.JobList, s.JobList)
	rpcapi.Handle(h, rpcapi.JobAllocations, s.JobAllocations)
	rpcapi.Handle(h, rpcapi.JobEvaluations, s.JobEvaluations)
	rpcapi.Handle(h, rpcapi.JobSummary, s.JobSummary)
	rpcapi.Handle(h, rpcapi.JobVersions, s.JobVersions)
	rpcapi.Handle(h, rpcapi.JobRevert, s.JobRevert)
	rpcapi.Handle(h, rpcapi.JobPeriodicForce, s.JobPeriodicForce) // periodic_endpoint.go
	rpcapi.Handle(h, rpcapi.JobDispatch, s.JobDispatch)
	rpcapi.Handle(h, rpcapi.JobPlan, s.JobPlan)
	rpcapi.Handle(h, rpcapi.JobValidate, s.JobValidate)
	rpcapi.Handle(h, rpcapi.AllocList, s.AllocList)
	rpcapi.Handle(h, rpcapi.AllocGet, s.AllocGet)
	rpcapi.Handle(h, rpcapi.AllocTimeline, s.AllocTimeline)
	rpcapi.Handle(h, rpcapi.AllocNode, s.AllocNode)
	rpcapi.Handle(h, rpcapi.AllocStop, s.AllocStop)
	rpcapi.Handle(h, rpcapi.EvalList, s.EvalList)
	rpcapi.Handle(h, rpcapi.EvalGet, s.EvalGet)
	rpcapi.Handle(h, rpcapi.EvalAllocations, s.EvalAllocations)
	rpcapi.Handle(h, rpcapi.NodeList, s.NodeList)
	rpcapi.Handle(h, rpcapi.NodeAllocations, s.NodeAllocations)
	rpcapi.Handle(h, rpcapi.NodeUpdateDrain, s.NodeUpdateDrain)             // node_drain_endpoint.go
	rpcapi.Handle(h, rpcapi.NodeUpdateEligibility, s.NodeUpdateEligibility) // node_drain_endpoint.go
	rpcapi.Handle(h, rpcapi.SystemGC, s.SystemGC)                           // gc.go
	rpcapi.Handle(h, rpcapi.NodeEvaluate, s.NodeEvaluate)                   // node_ops.go
	rpcapi.Handle(h, rpcapi.NodePurge, s.NodePurge)
	rpcapi.Handle(h, rpcapi.EvalDelete, s.EvalDelete)             // eval_delete.go
	rpcapi.Handle(h, rpcapi.Search, s.Search)                     // search.go
	rpcapi.Handle(h, rpcapi.JobGetSubmission, s.JobGetSubmission) // job_submission_endpoint.go
	rpcapi.Handle(h, rpcapi.SystemReconcileSummaries, s.SystemReconcileSummaries)
	rpcapi.Handle(h, rpcapi.DeploymentList, s.DeploymentList)
	rpcapi.Handle(h, rpcapi.DeploymentGet, s.DeploymentGet)
	rpcapi.Handle(h, rpcapi.DeploymentAllocations, s.DeploymentAllocations)
	rpcapi.Handle(h, rpcapi.DeploymentFail, s.DeploymentFail)
	rpcapi.Handle(h, rpcapi.DeploymentPause, s.DeploymentPause)
	rpcapi.Handle(h, rpcapi.DeploymentPromote, s.DeploymentPromote)
	rpcapi.Handle(h, rpcapi.NodePoolList, s.NodePoolList)
	rpcapi.Handle(h, rpcapi.NodePoolGet, s.NodePoolGet)
	rpcapi.Handle(h, rpcapi.NodePoolUpsert, s.NodePoolUpsert)
	rpcapi.Handle(h, rpcapi.NodePoolDelete, s.NodePoolDelete)
	rpcapi.Handle(h, rpcapi.SchedulerGetConfig, s.SchedulerGetConfig)
	rpcapi.Handle(h, rpcapi.SchedulerSetConfig, s.SchedulerSetConfig)
	rpcapi.Handle(h, rpcapi.JobEvaluate, s.JobEvaluate)
	rpcapi.Handle(h, rpcapi.NamespaceList, s.NamespaceList)
	rpcapi.Handle(h, rpcapi.NamespaceGet, s.NamespaceGet)
	rpcapi.Handle(h, rpcapi.NamespaceUpsert, s.NamespaceUpsert)
	rpcapi.Handle(h, rpcapi.NamespaceDelete, s.NamespaceDelete)
	// Variables and the keyring.
	rpcapi.Handle(h, rpcapi.VarList, s.VarList)
	rpcapi.Handle(h, rpcapi.VarGet, s.VarGet)
	rpcapi.Handle(h, rpcapi.VarApply, s.VarApply)
	rpcapi.Handle(h, rpcapi.KeyringList, s.KeyringList)
	rpcapi.Handle(h, rpcapi.KeyringRotate, s.KeyringRotate)
	rpcapi.Handle(h, rpcapi.KeyringDelete, s.KeyringDelete)
	rpcapi.Handle(h, rpcapi.KeyringPublicKeys, s.KeyringPublicKeys)
	// Workload identities (workload_identity.go).
	rpcapi.Handle(h, rpcapi.AllocSignIdentities, s.AllocSignIdentities)
	rpcapi.Handle(h, rpcapi.NodeSignIdentity, s.NodeSignIdentity)
	rpcapi.Handle(h, rpcapi.IdentityAuthorize, s.IdentityAuthorize)
	// The cluster's methods.
	rpcapi.Handle(h, rpcapi.ServerMembers, s.ServerMembers)
	rpcapi.Handle(h, rpcapi.ServerJoin, s.ServerJoin)
	rpcapi.Handle(h, rpcapi.ServerForceLeave, s.ServerForceLeave)
	rpcapi.Handle(h, rpcapi.StatusServers, s.StatusServers)
	rpcapi.Handle(h, rpcapi.ClusterStatus, s.ClusterStatus)
	rpcapi.Handle(h, rpcapi.RaftGetConfiguration, s.RaftGetConfiguration)
	rpcapi.Handle(h, rpcapi.RaftRemovePeer, s.RaftRemovePeer)
	rpcapi.Handle(h, rpcapi.AutopilotGetConfig, s.AutopilotGetConfig)
	rpcapi.Handle(h, rpcapi.AutopilotSetConfig, s.AutopilotSetConfig)
	rpcapi.Handle(h, rpcapi.AutopilotHealth, s.AutopilotHealth)
	rpcapi.Handle(h, rpcapi.SnapshotSave, s.SnapshotSave)
	rpcapi.Handle(h, rpcapi.SnapshotRestore, s.SnapshotRestore)
	rpcapi.Handle(h, rpcapi.EvalDequeue, s.EvalDequeue)
	rpcapi.Handle(h, rpcapi.EvalAck, s.EvalAck)
	rpcapi.Handle(h, rpcapi.PlanSubmit, s.PlanSubmit)
	h.Use(func(ctx context.Context, m *rpcapi.Info, req any, serve func(context.Context, any) (any, error)) (any, error) {
		if err := s.authorize(ctx, m, req); err != nil {
			return nil, err
		}
		return s.route(ctx, m, req, serve)
	})
	// ACLs (acl_endpoint.go).
	rpcapi.Handle(h, rpcapi.ACLBootstrap, s.ACLBootstrap)
	rpcapi.Handle(h, rpcapi.ACLResolveToken, s.ACLResolveToken)
	rpcapi.Handle(h, rpcapi.ACLTokenSelf, s.ACLTokenSelf)
	rpcapi.Handle(h, rpcapi.ACLPolicyUpsert, s.ACLPolicyUpsert)
	rpcapi.Handle(h, rpcapi.ACLPolicyDelete, s.ACLPolicyDelete)
	rpcapi.Handle(h, rpcapi.ACLPolicyList, s.ACLPolicyList)
	rpcapi.Handle(h, rpcapi.ACLPolicyGet, s.ACLPolicyGet)
	rpcapi.Handle(h, rpcapi.ACLTokenUpsert, s.ACLTokenUpsert)
	rpcapi.Handle(h, rpcapi.ACLTokenDelete, s.ACLTokenDelete)
	rpcapi.Handle(h, rpcapi.ACLTokenList, s.ACLTokenList)
	rpcapi.Handle(h, rpcapi.ACLTokenGet, s.ACLTokenGet)
	rpcapi.Handle(h, rpcapi.ACLRoleUpsert, s.ACLRoleUpsert)
	rpcapi.Handle(h, rpcapi.ACLRoleDelete, s.ACLRoleDelete)
	rpcapi.Handle(h, rpcapi.ACLRoleList, s.ACLRoleList)
	rpcapi.Handle(h, rpcapi.ACLRoleGet, s.ACLRoleGet)
	// Logins (acl_auth_endpoint.go, acl_login.go, acl_self.go).
	rpcapi.Handle(h, rpcapi.ACLAuthMethodUpsert, s.ACLAuthMethodUpsert)
	rpcapi.Handle(h, rpcapi.ACLAuthMethodDelete, s.ACLAuthMethodDelete)
	rpcapi.Handle(h, rpcapi.ACLAuthMethodList, s.ACLAuthMethodList)
	rpcapi.Handle(h, rpcapi.ACLAuthMethodGet, s.ACLAuthMethodGet)
	rpcapi.Handle(h, rpcapi.ACLBindingRuleUpsert, s.ACLBindingRuleUpsert)
	rpcapi.Handle(h, rpcapi.ACLBindingRuleDelete, s.ACLBindingRuleDelete)
	rpcapi.Handle(h, rpcapi.ACLBindingRuleList, s.ACLBindingRuleList)
	rpcapi.Handle(h, rpcapi.ACLBindingRuleGet, s.ACLBindingRuleGet)
	rpcapi.Handle(h, rpcapi.ACLLogin, s.ACLLogin)
	rpcapi.Handle(h, rpcapi.OneTimeTokenUpsert, s.OneTimeTokenUpsert)
	rpcapi.Handle(h, rpcapi.OneTimeTokenExchange, s.OneTimeTokenExchange)
	rpcapi.Handle(h, rpcapi.ACLPolicySelf, s.ACLPolicySelf)
	rpcapi.Handle(h, rpcapi.ClientIntroductionToken, s.ClientIntroductionToken)
	rpcapi.Handle(h, rpcapi.GossipKeyringList, s.GossipKeyringList) // gossip_keyring.go
	rpcapi.Handle(h, rpcapi.GossipKeyringOp, s.GossipKeyringOp)
	rpcapi.Handle(h, rpcapi.KEKHandoff, s.KEKHandoff) // kek_handoff.go
	// Service registrations.
	rpcapi.Handle(h, rpcapi.ServiceRegistrationUpsert, s.ServiceRegistrationUpsert)
	rpcapi.Handle(h, rpcapi.ServiceRegistrationDelete, s.ServiceRegistrationDelete)
	rpcapi.Handle(h, rpcapi.ServiceRegistrationList, s.ServiceRegistrationList)
	rpcapi.Handle(h, rpcapi.ServiceRegistrationGet, s.ServiceRegistrationGet)
	// Scaling (job_scale.go).
	rpcapi.Handle(h, rpcapi.JobScale, s.JobScale)
	rpcapi.Handle(h, rpcapi.JobScaleStatus, s.JobScaleStatus)
	rpcapi.Handle(h, rpcapi.ScalingPolicyList, s.ScalingPolicyList)
	rpcapi.Handle(h, rpcapi.ScalingPolicyGet, s.ScalingPolicyGet)
	rpcapi.Handle(h, rpcapi.JobTagVersion, s.JobTagVersion) // job_version_tag.go
	return h
}

// Handlers returns the server's methods, for an RPC listener
// (NewRPCServer).
func (s *Server) Handlers() *rpcapi.Handlers { return s.handlers }

// Invoke implements rpcapi.Conn: it calls a method of this server in
// process (a combined agent's HTTP API and client call it so).
func (s *Server) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	return s.handlers.Invoke(ctx, m, req)
}

var _ rpcapi.Conn = (*Server)(nil)
