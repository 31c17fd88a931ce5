package agent

import (
	"context"

	"github.com/drover-io/drover/structs"
)

// noServer is the Backend of a client-only agent: the cluster's state is on
// the servers, and this version does not forward HTTP requests to them.
// Backend methods added later reach the nil embedded interface and panic,
// which net/http turns into a failed request: override them here.
type noServer struct{ Backend }

var errNoServer = structs.NewError(structs.KindUnavailable,
	"this agent runs no server: send the request to a server agent's HTTP API (forwarding from clients comes in a later version)")

func (noServer) JobRegister(context.Context, *structs.JobRegisterRequest) (*structs.JobRegisterResponse, error) {
	return nil, errNoServer
}

func (noServer) JobDeregister(context.Context, *structs.JobDeregisterRequest) (*structs.JobDeregisterResponse, error) {
	return nil, errNoServer
}

func (noServer) JobGet(context.Context, *structs.JobSpecificRequest) (*structs.SingleJobResponse, error) {
	return nil, errNoServer
}

func (noServer) JobList(context.Context, *structs.JobListRequest) (*structs.JobListResponse, error) {
	return nil, errNoServer
}

func (noServer) JobAllocations(context.Context, *structs.JobSpecificRequest) (*structs.JobAllocationsResponse, error) {
	return nil, errNoServer
}

func (noServer) JobEvaluations(context.Context, *structs.JobSpecificRequest) (*structs.JobEvaluationsResponse, error) {
	return nil, errNoServer
}

func (noServer) AllocList(context.Context, *structs.AllocListRequest) (*structs.AllocListResponse, error) {
	return nil, errNoServer
}

func (noServer) AllocGet(context.Context, *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error) {
	return nil, errNoServer
}

func (noServer) EvalList(context.Context, *structs.EvalListRequest) (*structs.EvalListResponse, error) {
	return nil, errNoServer
}

func (noServer) EvalGet(context.Context, *structs.EvalSpecificRequest) (*structs.SingleEvalResponse, error) {
	return nil, errNoServer
}

func (noServer) NodeList(context.Context, *structs.NodeListRequest) (*structs.NodeListResponse, error) {
	return nil, errNoServer
}

func (noServer) NodeGet(context.Context, *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	return nil, errNoServer
}
