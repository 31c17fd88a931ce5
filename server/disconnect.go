package server

import (
	"fmt"
	"time"

	"github.com/drover-io/drover/structs"
)

// disconnectWindow returns how long the node's allocations may stay
// unknown once it missed its heartbeat: the longest lost_after of the
// disconnect blocks of the groups it runs (0: none has one, the node goes
// down at once).
func (s *Server) disconnectWindow(nodeID string) (time.Duration, error) {
	allocs, err := s.fsm.State().AllocsByNode(nil, nodeID)
	if err != nil {
		return 0, fmt.Errorf("read allocs of node %q: %w", nodeID, err)
	}
	var window time.Duration
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		if d := disconnectOf(a); d != nil {
			window = max(window, d.LostAfter)
		}
	}
	return window, nil
}

// disconnectOf returns the disconnect strategy of a's group, or nil.
func disconnectOf(a *structs.Allocation) *structs.DisconnectStrategy {
	if a.Job == nil {
		return nil
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || tg.Disconnect == nil || tg.Disconnect.LostAfter <= 0 {
		return nil
	}
	return tg.Disconnect
}

// allocStatusOnNodeChange is the client status a non-terminal allocation
// takes when its node's status becomes status ("": unchanged):
//
//   - down: lost;
//   - disconnected: unknown when its group has a disconnect block with a
//     lost_after, else lost;
//   - ready again after disconnected: an unknown allocation is what its
//     task states say (running when every task runs, else pending) until
//     its client reports it; the client's own updates queued meanwhile
//     follow and win.
func allocStatusOnNodeChange(a *structs.Allocation, status string) (string, string) {
	switch status {
	case structs.NodeStatusDown:
		return structs.AllocClientStatusLost, "alloc is lost since its node is down"
	case structs.NodeStatusDisconnected:
		if a.ClientStatus != structs.AllocClientStatusUnknown && disconnectOf(a) != nil {
			return structs.AllocClientStatusUnknown, "alloc is unknown since its node is disconnected"
		}
		if a.ClientStatus == structs.AllocClientStatusUnknown {
			return "", ""
		}
		return structs.AllocClientStatusLost, "alloc is lost since its node is disconnected and its group has no disconnect block"
	case structs.NodeStatusReady:
		if a.ClientStatus != structs.AllocClientStatusUnknown {
			return "", ""
		}
		running := len(a.TaskStates) > 0
		for _, ts := range a.TaskStates {
			if ts == nil || ts.State != structs.TaskStateRunning {
				running = false
			}
		}
		if running {
			return structs.AllocClientStatusRunning, "alloc's node reconnected"
		}
		return structs.AllocClientStatusPending, "alloc's node reconnected"
	}
	return "", ""
}
