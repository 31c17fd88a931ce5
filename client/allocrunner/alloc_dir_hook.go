package allocrunner

import (
	"context"

	"github.com/drover-io/drover/client/allocdir"
)

var (
	_ prerunHook  = (*allocDirHook)(nil)
	_ destroyHook = (*allocDirHook)(nil)
)

// allocDirHook builds the alloc directory before tasks start and removes
// it when the allocation is destroyed.
type allocDirHook struct {
	dir *allocdir.AllocDir
}

// Name returns "alloc_dir".
func (*allocDirHook) Name() string { return "alloc_dir" }

// Prerun builds the alloc directory.
func (h *allocDirHook) Prerun(ctx context.Context, req *PrerunRequest, resp *PrerunResponse) error {
	return h.dir.Build()
}

// Destroy removes the alloc directory.
func (h *allocDirHook) Destroy(ctx context.Context, req *DestroyRequest, resp *DestroyResponse) error {
	return h.dir.Destroy()
}
