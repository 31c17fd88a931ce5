package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
)

// registerTemplate stores a periodic or parameterized job, which is never
// scheduled itself: no evaluation. An unchanged job is not rewritten.
func (s *Server) registerTemplate(req *structs.JobRegisterRequest, job, existing *structs.Job) (*structs.JobRegisterResponse, error) {
	if existing != nil {
		changed, err := s.specChanged(existing, job)
		if err != nil {
			return nil, err
		}
		if !changed {
			return &structs.JobRegisterResponse{JobModifyIndex: existing.JobModifyIndex,
				WriteMeta: structs.WriteMeta{Index: existing.ModifyIndex}}, nil
		}
		job.Version = existing.Version + 1
	}
	job.SubmitTime = s.clock.Now().UnixNano()
	job.Status, job.StatusDescription = "", ""
	sub, warning := keptSubmission(req.Submission) // job_endpoint.go
	return applyWrite(s, req.RequestID, JobRegisterRequestType, &JobRegisterCommand{Job: job, CheckNamespace: true, Submission: sub},
		&structs.JobRegisterResponse{Warnings: warning}, completeJobRegister)
}

// childEval is the registration evaluation of a launched or dispatched
// child.
func (s *Server) childEval(child *structs.Job, trigger string) *structs.Evaluation {
	now := s.clock.Now().UnixNano()
	return &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   child.Namespace,
		Priority:    child.Priority,
		Type:        child.Type,
		TriggeredBy: trigger,
		JobID:       child.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
}

// periodicChild derives the child a periodic job launches at launch: its
// ID is "<job>/periodic-<unix seconds>", as Nomad's.
func periodicChild(parent *structs.Job, launch time.Time) *structs.Job {
	child := deriveChild(parent)
	child.ID = fmt.Sprintf("%s%s%d", parent.ID, structs.PeriodicLaunchSuffix, launch.Unix())
	child.Name = child.ID
	child.Periodic = nil
	return child
}

// deriveChild copies parent into a new job launched from it.
func deriveChild(parent *structs.Job) *structs.Job {
	child := parent.Copy()
	child.ParentID = parent.ID
	child.Stop, child.Stable = false, false
	child.Status, child.StatusDescription = "", ""
	child.Version, child.SubmitTime = 0, 0
	child.CreateIndex, child.ModifyIndex, child.JobModifyIndex = 0, 0, 0
	return child
}

// launchPeriodic registers the child of a periodic job for launch time
// at, recording the launch in the same raft entry. A child that exists
// already (the launch was committed before) is not registered again.
func (s *Server) launchPeriodic(parent *structs.Job, at time.Time, requestID string) (*structs.PeriodicForceResponse, error) {
	child := periodicChild(parent, at)
	existing, err := s.fsm.State().JobByID(nil, child.Namespace, child.ID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", child.ID, err)
	}
	if existing != nil {
		return nil, structs.NewError(structs.KindConflict, "periodic job %q was already launched at %s as %q", parent.ID, at.UTC().Format(time.RFC3339), child.ID)
	}
	child.SubmitTime = s.clock.Now().UnixNano()
	cmd := &JobRegisterCommand{Job: child, CheckNamespace: true,
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: parent.Namespace, ID: parent.ID, Launch: at.UTC()}}
	resp := &structs.PeriodicForceResponse{JobID: child.ID}
	if !child.IsTemplate() {
		cmd.Eval = s.childEval(child, structs.EvalTriggerPeriodicJob)
		resp.EvalID = cmd.Eval.ID
	}
	return applyWrite(s, requestID, JobRegisterRequestType, cmd, resp, completePeriodicForce)
}

func completePeriodicForce(r *structs.PeriodicForceResponse, index uint64, _ any) {
	r.Index = index
	if r.EvalID != "" {
		r.EvalCreateIndex = index
	}
}

// JobPeriodicForce launches a periodic job's child now, whatever its
// schedule and prohibit_overlap (as Nomad's `job periodic force`).
func (s *Server) JobPeriodicForce(ctx context.Context, req *structs.PeriodicForceRequest) (*structs.PeriodicForceResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completePeriodicForce); ok || err != nil {
		return r, err
	}
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	job, err := s.fsm.State().JobByID(nil, ns, req.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", req.JobID, err)
	}
	switch {
	case job == nil:
		return nil, structs.NotFound("job", req.JobID)
	case !job.IsPeriodic() || job.IsParameterized():
		return nil, structs.Invalid("job %q is not periodic: only a job with a periodic block can be forced", req.JobID)
	case job.Stop:
		return nil, structs.Invalid("job %q is stopped: run it again before forcing a launch", req.JobID)
	}
	return s.launchPeriodic(job, s.clock.Now(), req.RequestID)
}

// maxIDPrefixTemplate bounds a dispatch's id-prefix-template.
const maxIDPrefixTemplate = 128

// JobDispatch instantiates a parameterized job: a child
// "<job>/dispatch-<unix>-<8 hex>" (with IDPrefixTemplate
// "<job>/dispatch-<template>-<unix>-<8 hex>") carrying the payload, the
// job's meta merged with the request's, and its evaluation. A request
// whose IdempotencyToken a child of the job that is not stopped already
// carries answers that child.
func (s *Server) JobDispatch(ctx context.Context, req *structs.JobDispatchRequest) (*structs.JobDispatchResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	if r, ok, err := replayed(s, req.RequestID, completeJobDispatch); ok || err != nil {
		return r, err
	}
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	st := s.fsm.State()
	parent, err := st.JobByID(nil, ns, req.JobID)
	if err != nil {
		return nil, fmt.Errorf("read job %q: %w", req.JobID, err)
	}
	if parent == nil {
		return nil, structs.NotFound("job", req.JobID)
	}
	if err := checkDispatch(parent, req); err != nil {
		return nil, err
	}
	if req.IdempotencyToken != "" {
		if prev, err := s.dispatchedByToken(ns, parent.ID, req.IdempotencyToken); err != nil || prev != nil {
			return prev, err
		}
	}
	child := dispatchChild(parent, req, s.clock.Now())
	child.SubmitTime = s.clock.Now().UnixNano()
	if err := child.Validate(); err != nil {
		return nil, err
	}
	if err := s.fsm.storableJob(child); err != nil {
		return nil, err
	}
	cmd := &JobRegisterCommand{Job: child, CheckNamespace: true}
	resp := &structs.JobDispatchResponse{DispatchedJobID: child.ID}
	if !child.IsTemplate() {
		cmd.Eval = s.childEval(child, structs.EvalTriggerJobDispatch)
		resp.EvalID = cmd.Eval.ID
	}
	out, err := applyWrite(s, req.RequestID, JobRegisterRequestType, cmd, resp, completeJobDispatch)
	if err != nil && structs.KindOf(err) == structs.KindConflict && strings.Contains(err.Error(), dispatchTokenUsed) {
		// A dispatch with the same token committed first: answer its child.
		if prev, perr := s.dispatchedByToken(ns, parent.ID, req.IdempotencyToken); perr == nil && prev != nil {
			return prev, nil
		}
	}
	return out, err
}

// dispatchTokenUsed starts the FSM's refusal of a second child with one
// idempotency token.
const dispatchTokenUsed = "dispatch idempotency token"

// dispatchedByToken answers a dispatch with the child of parentID that
// carries token, or nil.
func (s *Server) dispatchedByToken(ns, parentID, token string) (*structs.JobDispatchResponse, error) {
	children, err := s.fsm.State().JobsByIDPrefix(nil, ns, parentID+structs.DispatchLaunchSuffix)
	if err != nil {
		return nil, fmt.Errorf("read children of job %q: %w", parentID, err)
	}
	for _, c := range children {
		if c.ParentID == parentID && c.DispatchIdempotencyToken == token && !c.Stop {
			return &structs.JobDispatchResponse{DispatchedJobID: c.ID, JobCreateIndex: c.CreateIndex,
				WriteMeta: structs.WriteMeta{Index: c.ModifyIndex}}, nil
		}
	}
	return nil, nil
}

func completeJobDispatch(r *structs.JobDispatchResponse, index uint64, _ any) {
	r.Index, r.JobCreateIndex = index, index
	if r.EvalID != "" {
		r.EvalCreateIndex = index
	}
}

// checkDispatch checks a dispatch request against its parameterized job:
// the payload (required, forbidden, size) and the metadata (every
// required key, no key the job does not declare).
func checkDispatch(parent *structs.Job, req *structs.JobDispatchRequest) error {
	if !parent.IsParameterized() {
		return structs.Invalid("job %q is not parameterized: only a job with a parameterized block can be dispatched", parent.ID)
	}
	if parent.Stop {
		return structs.Invalid("job %q is stopped: run it again before dispatching it", parent.ID)
	}
	var errs []string
	switch p := parent.ParameterizedJob; {
	case p.Payload == structs.DispatchPayloadRequired && len(req.Payload) == 0:
		errs = append(errs, "a payload is required: pass a file or - for standard input")
	case p.Payload == structs.DispatchPayloadForbidden && len(req.Payload) > 0:
		errs = append(errs, "a payload is forbidden by the job's parameterized block: dispatch without one")
	}
	if n := len(req.Payload); n > structs.DispatchPayloadSizeLimit {
		errs = append(errs, fmt.Sprintf("payload is %d bytes: at most %d", n, structs.DispatchPayloadSizeLimit))
	}
	p := parent.ParameterizedJob
	var missing []string
	for _, k := range p.MetaRequired {
		if _, ok := req.Meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Sprintf("missing required meta: %s (pass -meta %s=...)", strings.Join(missing, ", "), missing[0]))
	}
	var unknown []string
	for k := range req.Meta {
		if !slices.Contains(p.MetaRequired, k) && !slices.Contains(p.MetaOptional, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		errs = append(errs, fmt.Sprintf("meta keys not declared by the job's meta_required or meta_optional: %s", strings.Join(unknown, ", ")))
	}
	if req.Priority != 0 && (req.Priority < structs.JobMinPriority || req.Priority > structs.JobMaxPriority) {
		errs = append(errs, fmt.Sprintf("priority %d is out of range: use %d to %d", req.Priority, structs.JobMinPriority, structs.JobMaxPriority))
	}
	if len(req.IDPrefixTemplate) > maxIDPrefixTemplate {
		errs = append(errs, fmt.Sprintf("id prefix template is %d bytes: at most %d", len(req.IDPrefixTemplate), maxIDPrefixTemplate))
	}
	if len(errs) > 0 {
		return structs.Invalid("dispatch job %q: %s", parent.ID, strings.Join(errs, "; "))
	}
	return nil
}

// dispatchChild derives the child of a dispatch at now.
func dispatchChild(parent *structs.Job, req *structs.JobDispatchRequest, now time.Time) *structs.Job {
	child := deriveChild(parent)
	suffix := structs.GenerateUUID()[:8]
	if req.IDPrefixTemplate != "" {
		child.ID = fmt.Sprintf("%s%s%s-%d-%s", parent.ID, structs.DispatchLaunchSuffix, req.IDPrefixTemplate, now.Unix(), suffix)
	} else {
		child.ID = fmt.Sprintf("%s%s%d-%s", parent.ID, structs.DispatchLaunchSuffix, now.Unix(), suffix)
	}
	child.Name = child.ID
	child.Dispatched = true
	if req.Priority > 0 {
		child.Priority = req.Priority
	}
	child.Payload = slices.Clone(req.Payload)
	child.DispatchIdempotencyToken = req.IdempotencyToken
	if len(req.Meta) > 0 {
		if child.Meta == nil {
			child.Meta = map[string]string{}
		}
		maps.Copy(child.Meta, req.Meta)
	}
	return child
}
