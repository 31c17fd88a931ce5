package agent

import (
	"context"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/structs"
)

// rpcCaller calls a server method over the RPC transport, failing over
// between servers (*rpcclient.Client).
type rpcCaller interface {
	Call(ctx context.Context, method string, req, out any, timeout time.Duration) error
}

// forwardBackend is the Backend of a client-only agent: every call goes
// to a server's RPC port (server.APIRPCs), under the method's own name.
// Error kinds cross the wire, so a server's "not found" is this agent's
// 404; QueryMeta crosses it, so X-Nomad-Index and friends are the
// server's. A blocking query's attempt timeout is its wait plus slack, and
// the HTTP request's context (cancelled when the HTTP client goes away or
// the agent shuts down) ends it on the server too.
type forwardBackend struct {
	rpc rpcCaller
}

var (
	_ Backend       = (*forwardBackend)(nil)
	_ updateBackend = (*forwardBackend)(nil)
	_ allocStopper  = (*forwardBackend)(nil)
)

// forward calls method with req and returns its response. q is the
// request's query options (nil for a write): a query with an index blocks
// on the server, so its timeout follows its wait.
func forward[Resp any](ctx context.Context, c rpcCaller, method string, req any, q *structs.QueryOptions) (*Resp, error) {
	var timeout time.Duration // the caller's default
	if q != nil && q.MinQueryIndex > 0 {
		timeout = rpcclient.BlockingTimeout(q.MaxQueryTime)
	}
	var out Resp
	if err := c.Call(ctx, method, req, &out, timeout); err != nil {
		return nil, err
	}
	return &out, nil
}

func (f *forwardBackend) JobRegister(ctx context.Context, r *structs.JobRegisterRequest) (*structs.JobRegisterResponse, error) {
	return forward[structs.JobRegisterResponse](ctx, f.rpc, "JobRegister", r, nil)
}

func (f *forwardBackend) JobDeregister(ctx context.Context, r *structs.JobDeregisterRequest) (*structs.JobDeregisterResponse, error) {
	return forward[structs.JobDeregisterResponse](ctx, f.rpc, "JobDeregister", r, nil)
}

func (f *forwardBackend) JobGet(ctx context.Context, r *structs.JobSpecificRequest) (*structs.SingleJobResponse, error) {
	return forward[structs.SingleJobResponse](ctx, f.rpc, "JobGet", r, &r.QueryOptions)
}

func (f *forwardBackend) JobList(ctx context.Context, r *structs.JobListRequest) (*structs.JobListResponse, error) {
	return forward[structs.JobListResponse](ctx, f.rpc, "JobList", r, &r.QueryOptions)
}

func (f *forwardBackend) JobAllocations(ctx context.Context, r *structs.JobSpecificRequest) (*structs.JobAllocationsResponse, error) {
	return forward[structs.JobAllocationsResponse](ctx, f.rpc, "JobAllocations", r, &r.QueryOptions)
}

func (f *forwardBackend) JobEvaluations(ctx context.Context, r *structs.JobSpecificRequest) (*structs.JobEvaluationsResponse, error) {
	return forward[structs.JobEvaluationsResponse](ctx, f.rpc, "JobEvaluations", r, &r.QueryOptions)
}

func (f *forwardBackend) JobVersions(ctx context.Context, r *structs.JobVersionsRequest) (*structs.JobVersionsResponse, error) {
	return forward[structs.JobVersionsResponse](ctx, f.rpc, "JobVersions", r, &r.QueryOptions)
}

func (f *forwardBackend) JobRevert(ctx context.Context, r *structs.JobRevertRequest) (*structs.JobRegisterResponse, error) {
	return forward[structs.JobRegisterResponse](ctx, f.rpc, "JobRevert", r, nil)
}

func (f *forwardBackend) JobPlan(ctx context.Context, r *structs.JobPlanRequest) (*structs.JobPlanResponse, error) {
	return forward[structs.JobPlanResponse](ctx, f.rpc, "JobPlan", r, nil)
}

func (f *forwardBackend) AllocList(ctx context.Context, r *structs.AllocListRequest) (*structs.AllocListResponse, error) {
	return forward[structs.AllocListResponse](ctx, f.rpc, "AllocList", r, &r.QueryOptions)
}

func (f *forwardBackend) AllocGet(ctx context.Context, r *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error) {
	return forward[structs.SingleAllocResponse](ctx, f.rpc, "AllocGet", r, &r.QueryOptions)
}

func (f *forwardBackend) AllocStop(ctx context.Context, r *structs.AllocStopRequest) (*structs.AllocStopResponse, error) {
	return forward[structs.AllocStopResponse](ctx, f.rpc, "AllocStop", r, nil)
}

func (f *forwardBackend) EvalList(ctx context.Context, r *structs.EvalListRequest) (*structs.EvalListResponse, error) {
	return forward[structs.EvalListResponse](ctx, f.rpc, "EvalList", r, &r.QueryOptions)
}

func (f *forwardBackend) EvalGet(ctx context.Context, r *structs.EvalSpecificRequest) (*structs.SingleEvalResponse, error) {
	return forward[structs.SingleEvalResponse](ctx, f.rpc, "EvalGet", r, &r.QueryOptions)
}

func (f *forwardBackend) NodeList(ctx context.Context, r *structs.NodeListRequest) (*structs.NodeListResponse, error) {
	return forward[structs.NodeListResponse](ctx, f.rpc, "NodeList", r, &r.QueryOptions)
}

func (f *forwardBackend) NodeGet(ctx context.Context, r *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	return forward[structs.SingleNodeResponse](ctx, f.rpc, "NodeGet", r, &r.QueryOptions)
}

func (f *forwardBackend) DeploymentList(ctx context.Context, r *structs.DeploymentListRequest) (*structs.DeploymentListResponse, error) {
	return forward[structs.DeploymentListResponse](ctx, f.rpc, "DeploymentList", r, &r.QueryOptions)
}

func (f *forwardBackend) DeploymentGet(ctx context.Context, r *structs.DeploymentSpecificRequest) (*structs.SingleDeploymentResponse, error) {
	return forward[structs.SingleDeploymentResponse](ctx, f.rpc, "DeploymentGet", r, &r.QueryOptions)
}

func (f *forwardBackend) DeploymentFail(ctx context.Context, r *structs.DeploymentFailRequest) (*structs.DeploymentUpdateResponse, error) {
	return forward[structs.DeploymentUpdateResponse](ctx, f.rpc, "DeploymentFail", r, nil)
}

func (f *forwardBackend) DeploymentPause(ctx context.Context, r *structs.DeploymentPauseRequest) (*structs.DeploymentUpdateResponse, error) {
	return forward[structs.DeploymentUpdateResponse](ctx, f.rpc, "DeploymentPause", r, nil)
}

func (f *forwardBackend) SchedulerGetConfig(ctx context.Context, r *structs.SchedulerConfigRequest) (*structs.SchedulerConfigResponse, error) {
	return forward[structs.SchedulerConfigResponse](ctx, f.rpc, "SchedulerGetConfig", r, &r.QueryOptions)
}

func (f *forwardBackend) SchedulerSetConfig(ctx context.Context, r *structs.SchedulerSetConfigRequest) (*structs.SchedulerSetConfigResponse, error) {
	return forward[structs.SchedulerSetConfigResponse](ctx, f.rpc, "SchedulerSetConfig", r, nil)
}
