package server

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// SchedulerGetConfig returns the scheduler configuration: the stored one,
// or structs.DefaultSchedulerConfiguration when none was ever set.
func (s *Server) SchedulerGetConfig(ctx context.Context, req *structs.SchedulerConfigRequest) (*structs.SchedulerConfigResponse, error) {
	resp := &structs.SchedulerConfigResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		cfg, err := st.SchedulerConfig(ws)
		if err != nil {
			return 0, err
		}
		if cfg == nil {
			cfg = structs.DefaultSchedulerConfiguration()
		}
		resp.SchedulerConfig = cfg
		return st.Index(state.TableSchedConf), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// SchedulerSetConfig stores the scheduler configuration (with CAS, only if
// Config.ModifyIndex is the stored one's). An empty algorithm means binpack.
func (s *Server) SchedulerSetConfig(ctx context.Context, req *structs.SchedulerSetConfigRequest) (*structs.SchedulerSetConfigResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, structs.Invalid("missing scheduler configuration")
	}
	cfg := req.Config
	switch cfg.SchedulerAlgorithm {
	case "":
		cfg.SchedulerAlgorithm = structs.SchedulerAlgorithmBinpack
	case structs.SchedulerAlgorithmBinpack, structs.SchedulerAlgorithmSpread:
	default:
		return nil, structs.Invalid("scheduler algorithm %q is invalid: use %q or %q", cfg.SchedulerAlgorithm,
			structs.SchedulerAlgorithmBinpack, structs.SchedulerAlgorithmSpread)
	}
	index, out, err := s.raftApply(SchedulerConfigRequestType, &SchedulerConfigCommand{Config: cfg, CAS: req.CAS})
	if err != nil {
		return nil, err
	}
	updated, _ := out.(bool)
	return &structs.SchedulerSetConfigResponse{Updated: updated, WriteMeta: structs.WriteMeta{Index: index}}, nil
}
