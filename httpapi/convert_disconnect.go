package httpapi

import (
	"encoding/json"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// apiDisconnect is the disconnect block as Nomad's API sends it.
type apiDisconnect struct {
	LostAfter         *time.Duration
	Replace           *bool
	Reconcile         *string
	StopOnClientAfter *time.Duration
}

// disconnectStrategy converts a group's disconnect block, or its older
// max_client_disconnect and stop_after_client_disconnect (which may not be
// mixed with the block), into the group's strategy; nil when none is set.
func (c *converter) disconnectStrategy(where string, in *api.TaskGroup) *structs.DisconnectStrategy {
	block := !isUnsetJSON(in.Disconnect)
	legacy := !isUnsetJSON(in.MaxClientDisconnect) || !isUnsetJSON(in.StopAfterClientDisconnect)
	if !block && !legacy {
		return nil
	}
	out := &structs.DisconnectStrategy{Replace: true, Reconcile: structs.ReconcileBestScore}
	if block && legacy {
		c.errorf("%s: use the disconnect block or max_client_disconnect/stop_after_client_disconnect, not both", where)
		return nil
	}
	if legacy {
		if d, ok := c.rawDuration(where, "max_client_disconnect", in.MaxClientDisconnect); ok {
			out.LostAfter = d
		}
		if d, ok := c.rawDuration(where, "stop_after_client_disconnect", in.StopAfterClientDisconnect); ok {
			out.StopOnClientAfter = d
		}
	} else {
		var d apiDisconnect
		if err := json.Unmarshal(in.Disconnect, &d); err != nil {
			c.errorf("%s: disconnect block: %v", where, err)
			return nil
		}
		if d.LostAfter != nil {
			out.LostAfter = *d.LostAfter
		}
		if d.Replace != nil {
			out.Replace = *d.Replace
		}
		if d.Reconcile != nil {
			out.Reconcile = *d.Reconcile
		}
		if d.StopOnClientAfter != nil {
			out.StopOnClientAfter = *d.StopOnClientAfter
		}
	}
	switch out.Reconcile {
	case structs.ReconcileBestScore, structs.ReconcileKeepOriginal, structs.ReconcileKeepReplacement, structs.ReconcileLongestRunning:
	default:
		c.errorf("%s: disconnect reconcile %q is invalid: use best_score, keep_original, keep_replacement or longest_running", where, out.Reconcile)
	}
	if out.LostAfter < 0 || out.StopOnClientAfter < 0 {
		c.errorf("%s: disconnect lost_after and stop_on_client_after must not be negative", where)
	}
	if out.LostAfter > 0 && out.StopOnClientAfter > 0 {
		c.errorf("%s: disconnect lost_after and stop_on_client_after may not both be set", where)
	}
	return out
}

// rawDuration decodes a duration in nanoseconds.
func (c *converter) rawDuration(where, key string, raw json.RawMessage) (time.Duration, bool) {
	if isUnsetJSON(raw) {
		return 0, false
	}
	var d time.Duration
	if err := json.Unmarshal(raw, &d); err != nil {
		c.errorf("%s: %s must be a duration in nanoseconds: %v", where, key, err)
		return 0, false
	}
	return d, true
}
