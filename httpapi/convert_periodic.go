package httpapi

import (
	"slices"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// periodicConfig converts a periodic block; Enabled defaults to true as
// in Nomad. structs.Job.Validate checks the expressions and time zone.
func periodicConfig(in *api.PeriodicConfig) *structs.PeriodicConfig {
	if in == nil {
		return nil
	}
	out := &structs.PeriodicConfig{
		Enabled:         true,
		Spec:            deref(in.Spec),
		Specs:           slices.Clone(in.Specs),
		SpecType:        deref(in.SpecType),
		ProhibitOverlap: deref(in.ProhibitOverlap),
		TimeZone:        deref(in.TimeZone),
	}
	if in.Enabled != nil {
		out.Enabled = *in.Enabled
	}
	return out
}

// parameterizedConfig converts a parameterized block.
func parameterizedConfig(in *api.ParameterizedJobConfig) *structs.ParameterizedJobConfig {
	if in == nil {
		return nil
	}
	return &structs.ParameterizedJobConfig{
		Payload:      in.Payload,
		MetaRequired: slices.Clone(in.MetaRequired),
		MetaOptional: slices.Clone(in.MetaOptional),
	}
}
