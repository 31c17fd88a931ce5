package server

import (
	"errors"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// checkMountDrivers refuses a job whose tasks mount volumes (volume_mount)
// with a driver that cannot mount, as the nodes report it
// (DriverInfo.MountsUnsupported, from the driver's MountConfigs
// capability): raw_exec, whose tasks see the host's filesystem as it is.
// Such a job could only run with its mounts ignored.
//
// A driver no node reports is not judged here: the job is accepted, and
// the scheduler leaves it unplaced until a node offers the driver, and
// then places it only where the driver can mount (scheduler/host_volumes.go).
// nodes is read only when some task mounts a volume.
func checkMountDrivers(job *structs.Job, nodes func() ([]*structs.Node, error)) error {
	mounting := map[string]bool{} // drivers of tasks with mounts
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if len(t.VolumeMounts) > 0 {
				mounting[t.Driver] = true
			}
		}
	}
	if len(mounting) == 0 {
		return nil
	}
	all, err := nodes()
	if err != nil {
		return fmt.Errorf("read nodes: %w", err)
	}
	cannot := map[string]bool{}
	for d := range mounting {
		known, can := false, false
		for _, n := range all {
			if info := n.Drivers[d]; info != nil && info.Detected {
				known = true
				can = can || !info.MountsUnsupported
			}
		}
		cannot[d] = known && !can
	}
	var errs []error
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if len(t.VolumeMounts) > 0 && cannot[t.Driver] {
				errs = append(errs, fmt.Errorf("group %q, task %q: driver %q cannot mount volumes into its tasks (volume_mount): remove the volume_mount blocks, or use a driver that isolates the task's filesystem, such as exec or docker",
					tg.Name, t.Name, t.Driver))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &structs.KindError{Kind: structs.KindInvalid, Msg: errors.Join(errs...).Error()}
}
