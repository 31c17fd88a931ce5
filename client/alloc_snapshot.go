package client

import (
	"io"

	"github.com/drover-io/drover/client/allocwatcher"
	"github.com/drover-io/drover/structs"
)

// SnapshotAlloc writes a tar.gz of an allocation's migratable data
// (alloc/data and each task's local/ directory) to w, for the replacement
// of the allocation on another node. It is KindNotFound for an unknown
// allocation and for one whose directory was garbage collected.
func (c *Client) SnapshotAlloc(allocID string, w io.Writer) error {
	ar, err := c.allocRunner(allocID)
	if err != nil {
		return err
	}
	if ar.IsDestroyed() {
		return structs.NewError(structs.KindNotFound,
			"allocation %s was garbage collected on this node: its data is gone", allocID)
	}
	alloc := ar.Alloc()
	var tasks []string
	if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
		for _, t := range tg.Tasks {
			tasks = append(tasks, t.Name)
		}
	}
	return allocwatcher.WriteSnapshot(w, ar.AllocDir(), tasks)
}
