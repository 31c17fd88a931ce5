package httpapi

import (
	"fmt"
	"maps"
	"slices"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// services converts the service blocks of a group (task "") or a task.
// Their values are checked by structs.Job.Validate; here only what the
// conversion drops is reported: Consul's fields (refused when they change
// what runs, ignored otherwise).
func (c *converter) services(where string, in []*api.Service) []*structs.Service {
	if in == nil {
		return nil
	}
	out := make([]*structs.Service, 0, len(in))
	for i, s := range in {
		if s == nil {
			c.errorf("%s: service %d is null", where, i+1)
			continue
		}
		swhere := fmt.Sprintf("%s, service %q", where, s.Name)
		c.checkUnimplemented(swhere,
			unimplemented{"Connect", "connect block", s.Connect, rejected},
			unimplemented{"EnableTagOverride", "enable_tag_override", s.EnableTagOverride, ignored},
			unimplemented{"TaggedAddresses", "tagged_addresses", s.TaggedAddresses, ignored},
			unimplemented{"Identity", "identity block", s.Identity, ignored},
			unimplemented{"Cluster", "cluster", s.Cluster, ignored},
			unimplemented{"Weights", "weights block", s.Weights, ignored},
			unimplemented{"Kind", "kind", s.Kind, ignored},
		)
		svc := &structs.Service{
			Name:        s.Name,
			TaskName:    s.TaskName,
			PortLabel:   s.PortLabel,
			AddressMode: s.AddressMode,
			Address:     s.Address,
			Tags:        slices.Clone(s.Tags),
			CanaryTags:  slices.Clone(s.CanaryTags),
			Meta:        maps.Clone(s.Meta),
			CanaryMeta:  maps.Clone(s.CanaryMeta),
			Provider:    s.Provider,
			OnUpdate:    s.OnUpdate,
		}
		for k := range s.Checks {
			svc.Checks = append(svc.Checks, c.check(swhere, &s.Checks[k], s.CheckRestart))
		}
		out = append(out, svc)
	}
	return out
}

// check converts a check block; a check without its own check_restart
// takes its service's, as in Nomad.
func (c *converter) check(where string, in *api.ServiceCheck, serviceRestart *api.CheckRestart) *structs.ServiceCheck {
	c.checkUnimplemented(fmt.Sprintf("%s, check %q", where, in.Name),
		unimplemented{"Expose", "expose", in.Expose, rejected},
		unimplemented{"Advertise", "advertise", in.Advertise, ignored},
		unimplemented{"Notes", "notes", in.Notes, ignored},
		unimplemented{"FailuresBeforeWarning", "failures_before_warning", in.FailuresBeforeWarning, ignored},
	)
	out := &structs.ServiceCheck{
		Name:                   in.Name,
		Type:                   in.Type,
		Path:                   in.Path,
		Method:                 in.Method,
		Body:                   in.Body,
		Protocol:               in.Protocol,
		TLSSkipVerify:          in.TLSSkipVerify,
		TLSServerName:          in.TLSServerName,
		GRPCService:            in.GRPCService,
		GRPCUseTLS:             in.GRPCUseTLS,
		PortLabel:              in.PortLabel,
		AddressMode:            in.AddressMode,
		Command:                in.Command,
		Args:                   slices.Clone(in.Args),
		TaskName:               in.TaskName,
		Interval:               in.Interval,
		Timeout:                in.Timeout,
		InitialStatus:          in.InitialStatus,
		SuccessBeforePassing:   in.SuccessBeforePassing,
		FailuresBeforeCritical: in.FailuresBeforeCritical,
		OnUpdate:               in.OnUpdate,
	}
	if in.Header != nil {
		out.Header = make(map[string][]string, len(in.Header))
		for k, v := range in.Header {
			out.Header[k] = slices.Clone(v)
		}
	}
	if r := checkRestart(in.CheckRestart, serviceRestart); r != nil {
		out.CheckRestart = r
	}
	return out
}

// checkRestart merges a check's check_restart over its service's.
func checkRestart(own, service *api.CheckRestart) *structs.CheckRestart {
	if own == nil && service == nil {
		return nil
	}
	out := &structs.CheckRestart{}
	for _, r := range []*api.CheckRestart{service, own} {
		if r == nil {
			continue
		}
		if r.Limit != 0 {
			out.Limit = r.Limit
		}
		if r.Grace != nil {
			out.Grace = *r.Grace
		}
		if r.IgnoreWarnings {
			out.IgnoreWarnings = true
		}
	}
	return out
}
