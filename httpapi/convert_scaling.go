package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// groupScaling converts a group's scaling block (api.TaskGroup.Scaling,
// Nomad's ScalingPolicy JSON) with Nomad's defaults: type horizontal,
// enabled, min = the group's count. max is required. The server gives the
// policy its ID and target when the job is registered.
func (c *converter) groupScaling(where string, raw json.RawMessage, count int) *structs.ScalingPolicy {
	in, ok := c.decodeScaling(where, raw)
	if !ok {
		return nil
	}
	out := c.scalingPolicy(where, in, int64(count))
	if out != nil && out.Type == "" {
		out.Type = structs.ScalingPolicyTypeHorizontal
	}
	return out
}

// taskScaling converts a task's scaling "cpu"|"mem" blocks (the job file's
// label, or Nomad's vertical_cpu|vertical_mem types).
func (c *converter) taskScaling(where string, raw json.RawMessage) []*structs.ScalingPolicy {
	if isUnsetJSON(raw) {
		return nil
	}
	var in []*api.ScalingPolicy
	if err := strictUnmarshal(raw, &in); err != nil {
		c.errorf("%s: scaling: %v", where, err)
		return nil
	}
	var out []*structs.ScalingPolicy
	for _, p := range in {
		if p == nil {
			continue
		}
		typ := p.Type
		switch typ {
		case "cpu":
			typ = structs.ScalingPolicyTypeVerticalCPU
		case "mem":
			typ = structs.ScalingPolicyTypeVerticalMem
		case structs.ScalingPolicyTypeVerticalCPU, structs.ScalingPolicyTypeVerticalMem:
		default:
			c.errorf("%s: scaling %q: a task's scaling block is \"cpu\" or \"mem\"", where, p.Type)
			continue
		}
		if sp := c.scalingPolicy(fmt.Sprintf("%s, scaling %q", where, p.Type), p, 0); sp != nil {
			sp.Type = typ
			out = append(out, sp)
		}
	}
	return out
}

// decodeScaling decodes one scaling block; ok is false when it is unset
// or invalid (reported).
func (c *converter) decodeScaling(where string, raw json.RawMessage) (*api.ScalingPolicy, bool) {
	if isUnsetJSON(raw) {
		return nil, false
	}
	var in api.ScalingPolicy
	if err := strictUnmarshal(raw, &in); err != nil {
		c.errorf("%s: scaling: %v", where, err)
		return nil, false
	}
	return &in, true
}

// scalingPolicy converts one block; defMin is min's default.
func (c *converter) scalingPolicy(where string, in *api.ScalingPolicy, defMin int64) *structs.ScalingPolicy {
	out := &structs.ScalingPolicy{Type: in.Type, Policy: maps.Clone(in.Policy), Min: defMin, Enabled: true}
	if in.Min != nil {
		out.Min = *in.Min
	}
	if in.Max == nil {
		c.errorf("%s: scaling block needs max, the largest count an autoscaler or `job scale` may set", where)
		return nil
	}
	out.Max = *in.Max
	if in.Enabled != nil {
		out.Enabled = *in.Enabled
	}
	return out
}

// strictUnmarshal decodes raw into v, refusing unknown fields.
func strictUnmarshal(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
