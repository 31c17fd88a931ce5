package scheduler

import (
	"github.com/drover-io/drover/structs"
)

// filterHostVolumes starts the metric key of a node filtered for lacking
// a host volume a group asks for (Nomad's words), followed by the
// volume's source (not quoted: the CLI quotes the whole key).
const filterHostVolumes = "missing compatible host volumes"

// volumesBlock returns why node cannot run group tg's volumes, as the
// ConstraintFiltered key of the placement metric, or "" when it can:
//
//   - each of the group's volumes must be one of the node's host volumes
//     (Node.HostVolumes, by the volume's source); a volume the group does
//     not ask read-only must be writable on the node;
//   - each task that mounts a volume must use a driver that can mount
//     (DriverInfo.MountsUnsupported is false on the node).
//
// It is pure and allocates only when it filters the node.
func volumesBlock(node *structs.Node, tg *structs.TaskGroup) string {
	// The failing volume reported is the one whose name sorts first, so
	// that the reason is the same on every run.
	var failed string
	var failedReq *structs.VolumeRequest
	var readOnly bool
	for name, req := range tg.Volumes {
		if req == nil || req.Type != structs.VolumeTypeHost {
			continue // refused by validation
		}
		hv, ok := node.HostVolumes[req.Source]
		missing := !ok || hv == nil
		if !missing && !(hv.ReadOnly && !req.ReadOnly) {
			continue
		}
		if failedReq == nil || name < failed {
			failed, failedReq, readOnly = name, req, !missing
		}
	}
	if failedReq != nil {
		if readOnly {
			return filterHostVolumes + ": " + failedReq.Source + " is read-only and the group's volume is not"
		}
		return filterHostVolumes + ": " + failedReq.Source
	}
	for _, t := range tg.Tasks {
		if len(t.VolumeMounts) == 0 {
			continue
		}
		if info := node.Drivers[t.Driver]; info != nil && info.MountsUnsupported {
			return "driver " + t.Driver + " cannot mount volumes"
		}
	}
	return ""
}
