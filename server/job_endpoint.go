package server

import (
	"bytes"
	"context"
	"fmt"
	"maps"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// JobRegister validates and stores a job with a registration evaluation,
// atomically. The job's Version goes up when its specification changed; an
// unchanged job is not rewritten (its allocations stay current) but still
// gets an evaluation. With EnforceIndex, the registration only succeeds if
// the job's JobModifyIndex equals req.JobModifyIndex (0: the job must not
// exist); otherwise it is a KindConflict error whose message starts with
// Nomad's "Enforcing job modify index". PreserveCounts and
// PreserveResources keep the stored job's group counts and task resources;
// EvalPriority overrides the evaluation's priority.
func (s *Server) JobRegister(ctx context.Context, req *structs.JobRegisterRequest) (*structs.JobRegisterResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.Job == nil {
		return nil, structs.Invalid("missing job")
	}
	arrived := s.clock.Now()
	if r, ok, err := replayed(s, req.RequestID, completeJobRegister); ok || err != nil {
		return r, err
	}
	job := req.Job.Copy()
	job.Canonicalize()
	if req.EvalPriority < 0 || req.EvalPriority > structs.JobMaxPriority {
		return nil, structs.Invalid("eval priority %d is out of range: use 1 to %d", req.EvalPriority, structs.JobMaxPriority)
	}
	if err := job.Validate(); err != nil {
		return nil, err
	}
	if err := checkTaskConfigs(s.config.TaskConfigs, job); err != nil {
		return nil, err
	}
	if err := checkJobCount(job, s.config.JobMaxCount); err != nil {
		return nil, err
	}
	if err := checkMountDrivers(job, func() ([]*structs.Node, error) { return s.fsm.State().Nodes(nil) }); err != nil { // job_volumes.go
		return nil, err
	}
	if err := s.fsm.storableJob(job); err != nil {
		return nil, err
	}
	if err := s.checkJobNamespace(job); err != nil {
		return nil, err
	}
	existing, err := s.fsm.State().JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", job.ID, err)
	}
	if req.EnforceIndex {
		switch {
		case req.JobModifyIndex == 0 && existing != nil:
			return nil, structs.NewError(structs.KindConflict, "%s 0: job %q already exists", EnforceIndexErrPrefix, job.ID)
		case req.JobModifyIndex != 0 && existing == nil:
			return nil, structs.NewError(structs.KindConflict, "%s %d: job %q does not exist", EnforceIndexErrPrefix, req.JobModifyIndex, job.ID)
		case req.JobModifyIndex != 0 && existing.JobModifyIndex != req.JobModifyIndex:
			return nil, structs.NewError(structs.KindConflict, "%s %d: job %q exists with conflicting job modify index %d", EnforceIndexErrPrefix,
				req.JobModifyIndex, job.ID, existing.JobModifyIndex)
		}
	}
	if existing != nil {
		preserve(existing, job, req.PreserveCounts, req.PreserveResources)
	}
	job.AdoptScaling(existing) // policy IDs and scaling events (job_scale.go)
	job.VersionTag = nil       // a tag names one version (job_version_tag.go)
	if job.IsTemplate() {
		return s.registerTemplate(req, job, existing) // periodic_endpoint.go
	}
	now := s.clock.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   job.Namespace,
		Priority:    evalPriority(job.Priority, req.EvalPriority),
		Type:        job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
	s.timeline.MarkAt(eval.ID, structs.StepJobRegistered, arrived)
	if existing != nil {
		changed, err := s.specChanged(existing, job)
		if err != nil {
			return nil, err
		}
		if !changed {
			eval.JobModifyIndex = existing.JobModifyIndex
			return applyWrite(s, req.RequestID, EvalUpdateRequestType, &EvalUpdateCommand{Evals: []*structs.Evaluation{eval}},
				&structs.JobRegisterResponse{EvalID: eval.ID, JobModifyIndex: existing.JobModifyIndex}, completeJobRegister)
		}
		job.Version = existing.Version + 1
	}
	job.SubmitTime = now
	job.Status, job.StatusDescription = "", ""
	sub, warning := keptSubmission(req.Submission)
	return applyWrite(s, req.RequestID, JobRegisterRequestType, &JobRegisterCommand{Job: job, Eval: eval, CheckNamespace: true, Submission: sub},
		&structs.JobRegisterResponse{EvalID: eval.ID, Warnings: warning}, completeJobRegister)
}

// keptSubmission returns the job source to keep with a new version: a
// copy of sub, or nil with a warning when it is larger than
// structs.MaxJobSourceBytes (the job registers all the same).
func keptSubmission(sub *structs.JobSubmission) (*structs.JobSubmission, string) {
	if sub == nil {
		return nil, ""
	}
	if n := sub.Size(); n > structs.MaxJobSourceBytes {
		return nil, fmt.Sprintf("the job's source (%d bytes) is larger than %d bytes and was not kept", n, structs.MaxJobSourceBytes)
	}
	c := *sub
	if len(c.VariableFlags) == 0 {
		c.VariableFlags = nil
	} else {
		c.VariableFlags = maps.Clone(c.VariableFlags)
	}
	return &c, ""
}

// EnforceIndexErrPrefix starts the message of a registration refused by
// its EnforceIndex, as Nomad's does (clients match it).
const EnforceIndexErrPrefix = "Enforcing job modify index"

// evalPriority is an evaluation's priority: the request's override when
// set, else the job's.
func evalPriority(jobPriority, override int) int {
	if override > 0 {
		return override
	}
	return jobPriority
}

// preserve copies into job, a new version of existing, the counts of the
// groups (counts) and the resources of the tasks (resources) that existing
// has too.
func preserve(existing, job *structs.Job, counts, resources bool) {
	if !counts && !resources {
		return
	}
	for _, tg := range job.TaskGroups {
		old := existing.LookupTaskGroup(tg.Name)
		if old == nil {
			continue
		}
		if counts {
			tg.Count = old.Count
		}
		if !resources {
			continue
		}
		for _, t := range tg.Tasks {
			if ot := old.LookupTask(t.Name); ot != nil && ot.Resources != nil {
				t.Resources = ot.Resources.Copy()
			}
		}
	}
}

// completeJobRegister completes a registration's reply with its index; its
// JobModifyIndex is the index too, unless the job was left unchanged (the
// reply holds its JobModifyIndex then).
func completeJobRegister(r *structs.JobRegisterResponse, index uint64, _ any) {
	r.Index = index
	if r.EvalID != "" { // a periodic or parameterized job gets none
		r.EvalCreateIndex = index
	}
	if r.JobModifyIndex == 0 {
		r.JobModifyIndex = index
	}
}

// specChanged reports whether a submitted job differs from the stored one
// in anything the user controls. Both are compared in their raft encoding
// so that values that went through it (driver config) compare equal.
func (s *Server) specChanged(existing, job *structs.Job) (bool, error) {
	norm := func(j *structs.Job) ([]byte, error) {
		c := j.Copy()
		c.Status, c.StatusDescription, c.Stable = "", "", false
		c.Version, c.SubmitTime = 0, 0
		c.ScalingEvents, c.VersionTag = nil, nil
		c.CreateIndex, c.ModifyIndex, c.JobModifyIndex = 0, 0, 0
		var buf bytes.Buffer
		if err := codec.NewEncoder(&buf, s.fsm.handle).Encode(c); err != nil {
			return nil, fmt.Errorf("encode job %q: %w", j.ID, err)
		}
		return buf.Bytes(), nil
	}
	a, err := norm(existing)
	if err != nil {
		return false, err
	}
	// Round-trip the submitted job so that its values take stored types.
	var rt structs.Job
	b, err := norm(job)
	if err != nil {
		return false, err
	}
	if err := decodeBody(s.fsm.handle, b, &rt); err != nil {
		return false, fmt.Errorf("decode job %q: %w", job.ID, err)
	}
	if b, err = norm(&rt); err != nil {
		return false, err
	}
	return !bytes.Equal(a, b), nil
}

// JobDeregister stops a job (Stop=true, a new version) or, with Purge,
// deletes it; either way an evaluation (of EvalPriority when set) stops its
// allocations. A job that does not exist is no error and nothing is
// written, as in Nomad.
func (s *Server) JobDeregister(ctx context.Context, req *structs.JobDeregisterRequest) (*structs.JobDeregisterResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completeJobDeregister); ok || err != nil {
		return r, err
	}
	if req.EvalPriority < 0 || req.EvalPriority > structs.JobMaxPriority {
		return nil, structs.Invalid("eval priority %d is out of range: use 1 to %d", req.EvalPriority, structs.JobMaxPriority)
	}
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	existing, err := s.fsm.State().JobByID(nil, ns, req.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", req.JobID, err)
	}
	if existing == nil {
		// As Nomad: stopping what does not exist succeeds and does nothing.
		return &structs.JobDeregisterResponse{WriteMeta: structs.WriteMeta{Index: s.fsm.State().Index(state.TableJobs)}}, nil
	}
	now := s.clock.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   ns,
		Priority:    evalPriority(existing.Priority, req.EvalPriority),
		Type:        existing.Type,
		TriggeredBy: structs.EvalTriggerJobDeregister,
		JobID:       req.JobID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
	cmd := &JobDeregisterCommand{Namespace: ns, JobID: req.JobID, Purge: req.Purge, Eval: eval}
	if !req.Purge {
		stopped := existing.Copy()
		stopped.Stop = true
		if !existing.Stop {
			stopped.Version = existing.Version + 1
		}
		stopped.SubmitTime = now
		cmd.Job = stopped
	}
	return applyWrite(s, req.RequestID, JobDeregisterRequestType, cmd, &structs.JobDeregisterResponse{EvalID: eval.ID}, completeJobDeregister)
}

// completeJobDeregister completes a deregistration's reply with its index.
func completeJobDeregister(r *structs.JobDeregisterResponse, index uint64, _ any) {
	r.EvalCreateIndex, r.JobModifyIndex, r.Index = index, index, index
}

// JobList lists jobs with their summaries, filtered by namespace ("*" for
// all) and ID prefix.
func (s *Server) JobList(ctx context.Context, req *structs.JobListRequest) (*structs.JobListResponse, error) {
	resp := &structs.JobListResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var jobs []*structs.Job
		var err error
		if ns == "*" {
			jobs, err = st.Jobs(ws)
		} else {
			jobs, err = st.JobsByIDPrefix(ws, ns, req.Prefix)
		}
		if err != nil {
			return 0, err
		}
		sums, err := st.JobSummaries(ws)
		if err != nil {
			return 0, err
		}
		byJob := make(map[structs.NamespacedID]*structs.JobSummary, len(sums))
		for _, sum := range sums {
			byJob[structs.NamespacedID{Namespace: sum.Namespace, ID: sum.JobID}] = sum
		}
		resp.Jobs = make([]*structs.JobListStub, 0, len(jobs))
		for _, j := range jobs {
			if ns == "*" && req.Prefix != "" && !hasPrefix(j.ID, req.Prefix) {
				continue
			}
			resp.Jobs = append(resp.Jobs, j.Stub(byJob[j.NamespacedID()]))
		}
		return st.MaxIndex(state.TableJobs, state.TableJobSummary), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// JobAllocations lists a job's allocations. Without All, allocations of an
// earlier job registered under the same ID (since purged) are left out.
func (s *Server) JobAllocations(ctx context.Context, req *structs.JobSpecificRequest) (*structs.JobAllocationsResponse, error) {
	resp := &structs.JobAllocationsResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByJob(ws, ns, req.JobID)
		if err != nil {
			return 0, err
		}
		job, err := st.JobByID(ws, ns, req.JobID)
		if err != nil {
			return 0, err
		}
		resp.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			if !req.All && job != nil && a.Job != nil && a.Job.CreateIndex != job.CreateIndex {
				continue
			}
			resp.Allocations = append(resp.Allocations, a.Stub())
		}
		return st.MaxIndex(state.TableAllocs, state.TableJobs), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// JobEvaluations lists a job's evaluations.
func (s *Server) JobEvaluations(ctx context.Context, req *structs.JobSpecificRequest) (*structs.JobEvaluationsResponse, error) {
	resp := &structs.JobEvaluationsResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		evals, err := st.EvalsByJob(ws, ns, req.JobID)
		if err != nil {
			return 0, err
		}
		resp.Evaluations = evals
		if resp.Evaluations == nil {
			resp.Evaluations = []*structs.Evaluation{}
		}
		return st.Index(state.TableEvals), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
