package server

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// JobTagVersion applies a tag to a kept version of a job (the current one
// when req.Version is nil), or with Unset removes the tag named req.Name.
// Tag names are unique per job: a name already on another version is
// KindConflict, as is a version tagged with another name (unset it first).
// Applying the same tag again updates its description.
func (s *Server) JobTagVersion(ctx context.Context, req *structs.JobTagRequest) (*structs.JobTagResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || req.JobID == "" {
		return nil, structs.Invalid("missing job ID")
	}
	if req.Name == "" {
		return nil, structs.Invalid("missing tag name: give the tag a name (-name)")
	}
	if len(req.Name) > structs.MaxVersionTagNameLen || len(req.Description) > structs.MaxVersionTagDescriptionLen {
		return nil, structs.Invalid("tag name (at most %d bytes) or description (at most %d bytes) is too long",
			structs.MaxVersionTagNameLen, structs.MaxVersionTagDescriptionLen)
	}
	if r, ok, err := replayed(s, req.RequestID, completeJobTag); ok || err != nil {
		return r, err
	}
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	st := s.fsm.State()
	versions, err := st.JobVersions(nil, ns, req.JobID)
	if err != nil {
		return nil, fmt.Errorf("read versions of job %q: %w", req.JobID, err)
	}
	if len(versions) == 0 {
		return nil, structs.NotFound("job", req.JobID)
	}
	var target *structs.Job
	switch {
	case req.Unset:
		for _, v := range versions {
			if v.VersionTag != nil && v.VersionTag.Name == req.Name {
				target = v
			}
		}
		if target == nil {
			return nil, structs.NewError(structs.KindNotFound, "job %q has no version tagged %q", req.JobID, req.Name)
		}
	case req.Version == nil:
		target = versions[0] // newest first
	default:
		for _, v := range versions {
			if v.Version == *req.Version {
				target = v
			}
		}
		if target == nil {
			return nil, structs.NewError(structs.KindNotFound, "job %q has no version %d (kept: the last %d, and tagged ones)",
				req.JobID, *req.Version, structs.JobTrackedVersions)
		}
	}
	cmd := &JobVersionTagCommand{Namespace: ns, JobID: req.JobID, Version: target.Version}
	if !req.Unset {
		for _, v := range versions {
			if v.Version != target.Version && v.VersionTag != nil && v.VersionTag.Name == req.Name {
				return nil, structs.NewError(structs.KindConflict, "tag %q is already on version %d of job %q: unset it first",
					req.Name, v.Version, req.JobID)
			}
		}
		if t := target.VersionTag; t != nil && t.Name != req.Name {
			return nil, structs.NewError(structs.KindConflict, "version %d of job %q is already tagged %q: unset that tag first",
				target.Version, req.JobID, t.Name)
		}
		cmd.Tag = &structs.JobVersionTag{Name: req.Name, Description: req.Description, TaggedTime: s.clock.Now().UnixNano()}
	}
	return applyWrite(s, req.RequestID, JobVersionTagRequestType, cmd, &structs.JobTagResponse{Version: target.Version}, completeJobTag)
}

// completeJobTag completes a tag request's reply with its index.
func completeJobTag(r *structs.JobTagResponse, index uint64, _ any) { r.Index = index }
