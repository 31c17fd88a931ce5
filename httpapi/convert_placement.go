package httpapi

import (
	"encoding/json"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// affinities converts the affinity blocks of a job, group or task: an
// unset weight is 50 and an unset operator "=", as Nomad's. Ranges and
// syntax are checked by structs.Job.Validate.
func (c *converter) affinities(where string, in []*api.Affinity) []*structs.Affinity {
	var out []*structs.Affinity
	for i, a := range in {
		if a == nil {
			c.errorf("%s: affinity %d is null", where, i+1)
			continue
		}
		w := structs.DefaultPlacementWeight
		if a.Weight != nil {
			w = *a.Weight
		}
		op := a.Operand
		if op == "" {
			op = structs.ConstraintEqual
		}
		out = append(out, &structs.Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: op, Weight: w})
	}
	return out
}

// spreads converts the spread blocks of a job or group: an unset weight
// is 50, as Nomad's.
func (c *converter) spreads(where string, in []*api.Spread) []*structs.Spread {
	var out []*structs.Spread
	for i, s := range in {
		if s == nil {
			c.errorf("%s: spread %d is null", where, i+1)
			continue
		}
		w := structs.DefaultPlacementWeight
		if s.Weight != nil {
			w = *s.Weight
		}
		sp := &structs.Spread{Attribute: s.Attribute, Weight: w}
		for j, t := range s.SpreadTarget {
			if t == nil {
				c.errorf("%s: spread %s: target %d is null", where, s.Attribute, j+1)
				continue
			}
			sp.SpreadTarget = append(sp.SpreadTarget, &structs.SpreadTarget{Value: t.Value, Percent: t.Percent})
		}
		out = append(out, sp)
	}
	return out
}

// nodePool returns the job's node pool: "default" when unset; a value that
// is not a string is an error.
func (c *converter) nodePool(raw json.RawMessage) string {
	if raw == nil || isUnsetJSON(raw) {
		return structs.NodePoolDefault
	}
	var pool string
	if err := json.Unmarshal(raw, &pool); err != nil {
		c.errorf("job: NodePool (node_pool) must be a string, not %s", raw)
		return ""
	}
	if pool == "" {
		return structs.NodePoolDefault
	}
	return pool
}
