package httpapi

import (
	"maps"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// artifacts converts a task's artifact blocks; each is checked
// (structs.TaskArtifact.Validate) when the job is.
func (c *converter) artifacts(where string, in []*api.TaskArtifact) []*structs.TaskArtifact {
	if len(in) == 0 {
		return nil
	}
	out := make([]*structs.TaskArtifact, 0, len(in))
	for i, a := range in {
		if a == nil {
			c.errorf("%s: artifact %d is empty: give it a source", where, i+1)
			continue
		}
		out = append(out, &structs.TaskArtifact{
			GetterSource:   deref(a.GetterSource),
			GetterOptions:  maps.Clone(a.GetterOptions),
			GetterHeaders:  maps.Clone(a.GetterHeaders),
			GetterMode:     deref(a.GetterMode),
			GetterInsecure: deref(a.GetterInsecure),
			RelativeDest:   deref(a.RelativeDest),
			Chown:          a.Chown,
		})
	}
	return out
}
