package client

import (
	"time"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/structs"
)

// descStopOnClientAfter is the desired description of an allocation the
// client stopped on its own (disconnect.stop_on_client_after).
const descStopOnClientAfter = "alloc stopped by its client: no server reached within the group's disconnect stop_on_client_after"

// stopDisconnected stops the allocations whose group's disconnect block
// says to stop after stop_on_client_after without reaching a server, now
// that the client has reached none for silent. Only this node's runners
// change: the servers hear of it when they answer again.
func (c *Client) stopDisconnected(silent time.Duration) {
	type stop struct {
		ar    *allocrunner.AllocRunner
		alloc *structs.Allocation
	}
	var stops []stop
	c.allocMu.RLock()
	for _, ar := range c.allocs {
		a := ar.Alloc()
		if a == nil || a.ServerTerminalStatus() || a.Job == nil {
			continue
		}
		tg := a.Job.LookupTaskGroup(a.TaskGroup)
		if tg == nil || tg.Disconnect == nil || tg.Disconnect.StopOnClientAfter <= 0 || silent < tg.Disconnect.StopOnClientAfter {
			continue
		}
		stops = append(stops, stop{ar, a})
	}
	c.allocMu.RUnlock()
	for _, s := range stops {
		c.logger.Warn("no server reached within stop_on_client_after: stopping the allocation",
			"alloc_id", s.alloc.ID, "silent", silent.Round(time.Second))
		stopped := s.alloc.Copy()
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		stopped.DesiredDescription = descStopOnClientAfter
		s.ar.Update(stopped)
	}
}
