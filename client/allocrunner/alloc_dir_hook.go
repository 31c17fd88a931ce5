package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/drivers/shared/shim"
)

var (
	_ prerunHook  = (*allocDirHook)(nil)
	_ destroyHook = (*allocDirHook)(nil)
)

// allocDirHook builds the alloc directory before tasks start and removes
// it when the allocation is destroyed.
type allocDirHook struct {
	dir    *allocdir.AllocDir
	logger *slog.Logger
}

// Name returns "alloc_dir".
func (*allocDirHook) Name() string { return "alloc_dir" }

// Prerun builds the alloc directory.
func (h *allocDirHook) Prerun(ctx context.Context, req *PrerunRequest, resp *PrerunResponse) error {
	return h.dir.Build()
}

// Destroy removes the alloc directory, never from under a live shim. Its
// tasks were killed before the destroy hooks run, so a shim that still
// runs from the directory is one nobody supervises (an invocation the
// state lost): it is stopped first, its task killed. If it cannot be
// stopped, the directory is left in place and the error says why: its
// state dir is what a later agent needs to find and stop it.
func (h *allocDirHook) Destroy(ctx context.Context, req *DestroyRequest, resp *DestroyResponse) error {
	if err := h.stopLiveShims(ctx); err != nil {
		return fmt.Errorf("not removing alloc dir %s: %w", h.dir.AllocDir, err)
	}
	return h.dir.Destroy()
}

// stopLiveShims stops every shim still running from the alloc dir.
func (h *allocDirHook) stopLiveShims(ctx context.Context) error {
	dirs, err := shim.AllocStateDirs(h.dir.AllocDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range dirs {
		live, err := shim.Live(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !live {
			continue
		}
		h.logger.Warn("a shim still runs from the alloc dir being destroyed; stopping it", "state_dir", dir)
		if err := shim.Abandon(ctx, dir); err != nil {
			errs = append(errs, fmt.Errorf("shim %s still runs: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}
