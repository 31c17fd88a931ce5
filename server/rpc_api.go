package server

import (
	"context"

	"github.com/drover-io/drover/structs"
)

// APIRPCs are the server methods behind the HTTP API (jobs, allocations,
// evaluations, nodes, deployments, plans, versions, the scheduler
// configuration). A client-only agent forwards its HTTP API to a server
// by calling them over the RPC port. *Server implements it; NewRPCHandler
// serves them when its ClientRPCs also implement APIRPCs.
type APIRPCs interface {
	JobRegister(context.Context, *structs.JobRegisterRequest) (*structs.JobRegisterResponse, error)
	JobDeregister(context.Context, *structs.JobDeregisterRequest) (*structs.JobDeregisterResponse, error)
	JobGet(context.Context, *structs.JobSpecificRequest) (*structs.SingleJobResponse, error)
	JobList(context.Context, *structs.JobListRequest) (*structs.JobListResponse, error)
	JobAllocations(context.Context, *structs.JobSpecificRequest) (*structs.JobAllocationsResponse, error)
	JobEvaluations(context.Context, *structs.JobSpecificRequest) (*structs.JobEvaluationsResponse, error)
	JobVersions(context.Context, *structs.JobVersionsRequest) (*structs.JobVersionsResponse, error)
	JobRevert(context.Context, *structs.JobRevertRequest) (*structs.JobRegisterResponse, error)
	JobPlan(context.Context, *structs.JobPlanRequest) (*structs.JobPlanResponse, error)
	AllocList(context.Context, *structs.AllocListRequest) (*structs.AllocListResponse, error)
	AllocGet(context.Context, *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error)
	AllocStop(context.Context, *structs.AllocStopRequest) (*structs.AllocStopResponse, error)
	EvalList(context.Context, *structs.EvalListRequest) (*structs.EvalListResponse, error)
	EvalGet(context.Context, *structs.EvalSpecificRequest) (*structs.SingleEvalResponse, error)
	NodeList(context.Context, *structs.NodeListRequest) (*structs.NodeListResponse, error)
	NodeGet(context.Context, *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error)
	DeploymentList(context.Context, *structs.DeploymentListRequest) (*structs.DeploymentListResponse, error)
	DeploymentGet(context.Context, *structs.DeploymentSpecificRequest) (*structs.SingleDeploymentResponse, error)
	DeploymentFail(context.Context, *structs.DeploymentFailRequest) (*structs.DeploymentUpdateResponse, error)
	DeploymentPause(context.Context, *structs.DeploymentPauseRequest) (*structs.DeploymentUpdateResponse, error)
	SchedulerGetConfig(context.Context, *structs.SchedulerConfigRequest) (*structs.SchedulerConfigResponse, error)
	SchedulerSetConfig(context.Context, *structs.SchedulerSetConfigRequest) (*structs.SchedulerSetConfigResponse, error)
}

var _ APIRPCs = (*Server)(nil)

// rpcMethod decodes a request with dec and calls a server method with it.
type rpcMethod func(ctx context.Context, dec func(any) error) (any, error)

// register adds the method name, served by fn, to m. A new RPC is one
// line: register(m, "JobGet", rpcs.JobGet). The call's context is the
// HTTP request's, so that a caller that goes away cancels a blocking
// query; the query's own wait bounds it on this side.
func register[Req, Resp any](m map[string]rpcMethod, name string, fn func(context.Context, *Req) (*Resp, error)) {
	m[name] = func(ctx context.Context, dec func(any) error) (any, error) {
		var req Req
		if err := dec(&req); err != nil {
			return nil, err
		}
		return fn(ctx, &req)
	}
}

// registerClientRPCs adds the methods a node agent calls.
func registerClientRPCs(m map[string]rpcMethod, rpcs ClientRPCs) {
	register(m, "NodeRegister", rpcs.NodeRegister)
	register(m, "NodeUpdateStatus", rpcs.NodeUpdateStatus)
	register(m, "NodeGetClientAllocs", rpcs.NodeGetClientAllocs)
	register(m, "AllocGetAllocs", rpcs.AllocGetAllocs)
	register(m, "NodeUpdateAlloc", rpcs.NodeUpdateAlloc)
	register(m, "NodeGet", rpcs.NodeGet)
}

// registerAPIRPCs adds the methods behind the HTTP API, which a
// client-only agent forwards (agent/forward_backend.go).
func registerAPIRPCs(m map[string]rpcMethod, rpcs APIRPCs) {
	register(m, "JobRegister", rpcs.JobRegister)
	register(m, "JobDeregister", rpcs.JobDeregister)
	register(m, "JobGet", rpcs.JobGet)
	register(m, "JobList", rpcs.JobList)
	register(m, "JobAllocations", rpcs.JobAllocations)
	register(m, "JobEvaluations", rpcs.JobEvaluations)
	register(m, "JobVersions", rpcs.JobVersions)
	register(m, "JobRevert", rpcs.JobRevert)
	register(m, "JobPlan", rpcs.JobPlan)
	register(m, "AllocList", rpcs.AllocList)
	register(m, "AllocGet", rpcs.AllocGet)
	register(m, "AllocStop", rpcs.AllocStop)
	register(m, "EvalList", rpcs.EvalList)
	register(m, "EvalGet", rpcs.EvalGet)
	register(m, "NodeList", rpcs.NodeList)
	register(m, "NodeGet", rpcs.NodeGet)
	register(m, "DeploymentList", rpcs.DeploymentList)
	register(m, "DeploymentGet", rpcs.DeploymentGet)
	register(m, "DeploymentFail", rpcs.DeploymentFail)
	register(m, "DeploymentPause", rpcs.DeploymentPause)
	register(m, "SchedulerGetConfig", rpcs.SchedulerGetConfig)
	register(m, "SchedulerSetConfig", rpcs.SchedulerSetConfig)
}
