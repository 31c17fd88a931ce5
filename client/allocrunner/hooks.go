package allocrunner

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// runnerHook is what every alloc hook implements.
type runnerHook interface {
	// Name identifies the hook in logs and errors.
	Name() string
}

// prerunHook runs before any task starts; an error fails the allocation.
type prerunHook interface {
	runnerHook
	Prerun(ctx context.Context, req *PrerunRequest, resp *PrerunResponse) error
}

// updateHook runs when the server sends a new version of a running
// allocation (not for stops).
type updateHook interface {
	runnerHook
	Update(ctx context.Context, req *UpdateRequest, resp *UpdateResponse) error
}

// postrunHook runs after every task is dead.
type postrunHook interface {
	runnerHook
	Postrun(ctx context.Context, req *PostrunRequest, resp *PostrunResponse) error
}

// destroyHook runs when the allocation is destroyed; best effort.
type destroyHook interface {
	runnerHook
	Destroy(ctx context.Context, req *DestroyRequest, resp *DestroyResponse) error
}

// shutdownHook runs when the agent shuts down, leaving tasks running.
type shutdownHook interface {
	runnerHook
	Shutdown(ctx context.Context, req *ShutdownRequest, resp *ShutdownResponse) error
}

// PrerunRequest is given to prerun hooks.
type PrerunRequest struct{ Alloc *structs.Allocation }

// PrerunResponse is returned by prerun hooks.
type PrerunResponse struct{}

// UpdateRequest is given to update hooks.
type UpdateRequest struct{ Alloc *structs.Allocation }

// UpdateResponse is returned by update hooks.
type UpdateResponse struct{}

// PostrunRequest is given to postrun hooks.
type PostrunRequest struct{ Alloc *structs.Allocation }

// PostrunResponse is returned by postrun hooks.
type PostrunResponse struct{}

// DestroyRequest is given to destroy hooks.
type DestroyRequest struct{ Alloc *structs.Allocation }

// DestroyResponse is returned by destroy hooks.
type DestroyResponse struct{}

// ShutdownRequest is given to shutdown hooks.
type ShutdownRequest struct{ Alloc *structs.Allocation }

// ShutdownResponse is returned by shutdown hooks.
type ShutdownResponse struct{}

func (ar *AllocRunner) prerun(ctx context.Context) error {
	for _, h := range ar.hooks {
		if p, ok := h.(prerunHook); ok {
			if err := p.Prerun(ctx, &PrerunRequest{Alloc: ar.Alloc()}, &PrerunResponse{}); err != nil {
				return fmt.Errorf("prerun hook %q: %w", h.Name(), err)
			}
		}
	}
	return nil
}

func (ar *AllocRunner) update(ctx context.Context, alloc *structs.Allocation) {
	for _, h := range ar.hooks {
		if u, ok := h.(updateHook); ok {
			if err := u.Update(ctx, &UpdateRequest{Alloc: alloc}, &UpdateResponse{}); err != nil {
				ar.logger.Error("update hook failed", "hook", h.Name(), "error", err)
			}
		}
	}
}

func (ar *AllocRunner) postrun(ctx context.Context) {
	for _, h := range ar.hooks {
		if p, ok := h.(postrunHook); ok {
			if err := p.Postrun(ctx, &PostrunRequest{Alloc: ar.Alloc()}, &PostrunResponse{}); err != nil {
				ar.logger.Error("postrun hook failed", "hook", h.Name(), "error", err)
			}
		}
	}
}

func (ar *AllocRunner) destroyHooks(ctx context.Context) {
	for _, h := range ar.hooks {
		if d, ok := h.(destroyHook); ok {
			if err := d.Destroy(ctx, &DestroyRequest{Alloc: ar.Alloc()}, &DestroyResponse{}); err != nil {
				ar.logger.Error("destroy hook failed", "hook", h.Name(), "error", err)
			}
		}
	}
}

func (ar *AllocRunner) shutdownHooks(ctx context.Context) {
	for _, h := range ar.hooks {
		if s, ok := h.(shutdownHook); ok {
			if err := s.Shutdown(ctx, &ShutdownRequest{Alloc: ar.Alloc()}, &ShutdownResponse{}); err != nil {
				ar.logger.Error("shutdown hook failed", "hook", h.Name(), "error", err)
			}
		}
	}
}
