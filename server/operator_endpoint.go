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
	if r, ok, err := replayed(s, req.RequestID, completeSchedulerSetConfig); ok || err != nil {
		return r, err
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
	resp, err := applyWrite(s, req.RequestID, SchedulerConfigRequestType, &SchedulerConfigCommand{Config: cfg, CAS: req.CAS},
		&structs.SchedulerSetConfigResponse{}, completeSchedulerSetConfig)
	if err == nil && resp.Updated {
		s.broker.SetPaused(cfg.PauseEvalBroker)
	}
	return resp, err
}

// completeSchedulerSetConfig completes the reply with the write's index and
// whether the configuration was written (a CAS may have failed).
func completeSchedulerSetConfig(r *structs.SchedulerSetConfigResponse, index uint64, result any) {
	r.Updated, _ = result.(bool)
	r.Index = index
}
