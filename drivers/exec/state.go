package exec

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins/drivers"
)

// handleVersion is the version of the TaskHandle's DriverState format.
// Version 1 (a task supervised in the agent, found again by pid) is no
// longer read: such a task died with the agent that was its parent, or
// runs unsupervised, and RecoverTask reports it not found.
const handleVersion = 2

// driverState is exec's DriverState: the shim to re-attach to, and the
// task's process and cgroup as isolation sees them (for ExecTask).
type driverState struct {
	Version   int             `json:"version"`
	Shim      *shim.State     `json:"shim"`
	Isolation isolation.State `json:"isolation"`
}

// isolationState is the task's process and cgroup from its shim's state.
func isolationState(st *shim.State) isolation.State {
	return isolation.State{Pid: st.TaskPID, StartTime: st.TaskStartTicks, Cgroup: st.Cgroup}
}

func encodeDriverState(st *shim.State) ([]byte, error) {
	b, err := json.Marshal(driverState{Version: handleVersion, Shim: st, Isolation: isolationState(st)})
	if err != nil {
		return nil, fmt.Errorf("encode driver state: %w", err)
	}
	return b, nil
}

// decodeDriverState reads the shim's State from a handle. A handle of
// another version wraps drivers.ErrTaskNotFound: there is no shim to
// re-attach to, and the client should start the task again.
func decodeDriverState(h *drivers.TaskHandle) (*shim.State, error) {
	if h.Version != handleVersion {
		return nil, fmt.Errorf("task handle version %d, this driver reads %d: %w", h.Version, handleVersion, drivers.ErrTaskNotFound)
	}
	var ds driverState
	if err := json.Unmarshal(h.DriverState, &ds); err != nil {
		return nil, fmt.Errorf("decode driver state: %w", err)
	}
	if ds.Version != handleVersion {
		return nil, fmt.Errorf("driver state version %d, this driver reads %d: %w", ds.Version, handleVersion, drivers.ErrTaskNotFound)
	}
	if ds.Shim == nil || ds.Shim.Cgroup == nil {
		return nil, errors.New("decode driver state: no shim state or no cgroup")
	}
	return ds.Shim, nil
}
