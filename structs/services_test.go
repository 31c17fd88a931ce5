package structs

import (
	"strings"
	"testing"
	"time"
)

func TestServicesValidate(t *testing.T) {
	check := func(mut func(*ServiceCheck)) *ServiceCheck {
		c := &ServiceCheck{Type: ServiceCheckHTTP, Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second}
		mut(c)
		return c
	}
	tests := []struct {
		name    string
		group   []*Service
		task    []*Service
		wantErr []string // each must appear; none: valid
	}{
		{name: "nomad group service with http check", group: []*Service{{Name: "web", PortLabel: "http", Provider: "nomad", Checks: []*ServiceCheck{check(func(*ServiceCheck) {})}}}},
		{name: "nomad task service with interpolated name", task: []*Service{{Name: "${NOMAD_JOB_NAME}-web", PortLabel: "http", Provider: "nomad", Tags: []string{"${NOMAD_ALLOC_INDEX}"}}}},
		{name: "unset provider is consul, refused", group: []*Service{{Name: "web", PortLabel: "http"}},
			wantErr: []string{`group "g", service "web": provider "consul (the default when unset)": Consul is not supported by drover: set provider = "nomad"`}},
		{name: "consul refused in a task", task: []*Service{{Name: "web", Provider: "consul"}},
			wantErr: []string{`group "g", task "t", service "web": provider "consul": Consul is not supported`}},
		{name: "unknown port label", group: []*Service{{Name: "web", PortLabel: "nope", Provider: "nomad"}},
			wantErr: []string{`port "nope" is not a port label of the group's network`}},
		{name: "bad name", group: []*Service{{Name: "web_1", Provider: "nomad"}}, wantErr: []string{`name "web_1" is invalid`}},
		{name: "check needs a port", group: []*Service{{Name: "web", Provider: "nomad", Checks: []*ServiceCheck{check(func(*ServiceCheck) {})}}},
			wantErr: []string{`a http check needs a port`}},
		{name: "short interval, bad protocol", group: []*Service{{Name: "web", PortLabel: "http", Provider: "nomad", Checks: []*ServiceCheck{check(func(c *ServiceCheck) {
			c.Interval = time.Millisecond
			c.Protocol = "ftp"
		})}}}, wantErr: []string{"interval 1ms is below the minimum of 1s", `protocol "ftp" is invalid`}},
		{name: "group script check needs a task", group: []*Service{{Name: "web", Provider: "nomad", Checks: []*ServiceCheck{check(func(c *ServiceCheck) {
			c.Type, c.Command = ServiceCheckScript, "/bin/true"
		})}}}, wantErr: []string{"a script check of a group service needs task"}},
		{name: "grpc check", group: []*Service{{Name: "web", PortLabel: "http", Provider: "nomad", Checks: []*ServiceCheck{check(func(c *ServiceCheck) {
			c.Type, c.GRPCService = ServiceCheckGRPC, "app.v1.Api"
		})}}}},
		{name: "grpc check needs a port", group: []*Service{{Name: "web", Provider: "nomad", Checks: []*ServiceCheck{check(func(c *ServiceCheck) { c.Type = ServiceCheckGRPC })}}},
			wantErr: []string{"a grpc check needs a port"}},
		{name: "unknown check type", group: []*Service{{Name: "web", PortLabel: "http", Provider: "nomad", Checks: []*ServiceCheck{check(func(c *ServiceCheck) { c.Type = "udp" })}}},
			wantErr: []string{`type "udp" is invalid: use http, tcp, grpc or script`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := validJob()
			tg := j.TaskGroups[0]
			tg.Networks = []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}}}}
			tg.Services = tt.group
			tg.Tasks[0].Services = tt.task
			j.Canonicalize()
			err := j.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: no error, want %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestServiceCanonicalize(t *testing.T) {
	j := validJob()
	j.TaskGroups[0].Tasks[0].Services = []*Service{{Name: "web", Provider: "nomad", Checks: []*ServiceCheck{{Type: ServiceCheckHTTP}}}}
	j.Canonicalize()
	s := j.TaskGroups[0].Tasks[0].Services[0]
	c := s.Checks[0]
	if s.TaskName != "t" || s.AddressMode != AddressModeAuto || s.OnUpdate != OnUpdateRequireHealthy {
		t.Errorf("service = %+v, want task t, address_mode auto, on_update require_healthy", s)
	}
	if c.Method != "GET" || c.Protocol != "http" || c.TaskName != "t" || c.OnUpdate != OnUpdateRequireHealthy || c.Name == "" {
		t.Errorf("check = %+v, want Nomad's defaults", c)
	}
	if !j.TaskGroups[0].HasChecks() {
		t.Error("HasChecks = false for a task service with a check")
	}
	// Copies are deep.
	cp := j.Copy()
	cp.TaskGroups[0].Tasks[0].Services[0].Checks[0].Path = "/changed"
	if c.Path != "" {
		t.Error("Copy shares checks")
	}
}
