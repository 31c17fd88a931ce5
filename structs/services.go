package structs

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Service providers (Service.Provider). Only Nomad's native service
// discovery is implemented; a job asking for Consul is refused when it is
// submitted.
const (
	// ServiceProviderNomad registers the service in the servers' state.
	ServiceProviderNomad = "nomad"
	// ServiceProviderConsul is Nomad's default provider, refused here.
	ServiceProviderConsul = "consul"
)

// Address modes of a service or check (Service.AddressMode), as Nomad's.
const (
	// AddressModeAuto picks the host address of the port (the default).
	AddressModeAuto = "auto"
	// AddressModeHost is the node's address and the host port.
	AddressModeHost = "host"
	// AddressModeAlloc is the allocation's own address and the port's
	// "to" port (the same as host in host networking).
	AddressModeAlloc = "alloc"
	// AddressModeDriver is the address the driver reports (docker's
	// container address) and the port's "to" port.
	AddressModeDriver = "driver"
)

// Check types (ServiceCheck.Type).
const (
	ServiceCheckHTTP   = "http"
	ServiceCheckTCP    = "tcp"
	ServiceCheckScript = "script"
	ServiceCheckGRPC   = "grpc"
)

// Values of on_update (Service.OnUpdate, ServiceCheck.OnUpdate): whether a
// check counts for the allocation's deployment health.
const (
	OnUpdateRequireHealthy = "require_healthy"
	OnUpdateIgnoreWarn     = "ignore_warnings"
	OnUpdateIgnore         = "ignore"
)

// Check limits, as Nomad's.
const (
	// MinCheckInterval is the shortest check interval.
	MinCheckInterval = time.Second
	// MinCheckTimeout is the shortest check timeout.
	MinCheckTimeout = time.Second
)

// Service is a service block of a group or a task: a name under which the
// allocation's address and port are registered while it runs, and the
// checks that tell whether it is healthy.
type Service struct {
	// Name may hold ${...} interpolations, resolved by the client with
	// the task's environment.
	Name string
	// TaskName is the task a group service belongs to (for its checks'
	// script and restarts); set by the server for task services.
	TaskName string `json:",omitempty"`
	// PortLabel is a port label of the group's network, or a number.
	PortLabel   string `json:",omitempty"`
	AddressMode string `json:",omitempty"`
	// Address overrides the registered address.
	Address    string            `json:",omitempty"`
	Tags       []string          `json:",omitempty"`
	CanaryTags []string          `json:",omitempty"`
	Meta       map[string]string `json:",omitempty"`
	CanaryMeta map[string]string `json:",omitempty"`
	Provider   string            `json:",omitempty"`
	OnUpdate   string            `json:",omitempty"`
	Checks     []*ServiceCheck   `json:",omitempty"`
}

// ServiceCheck is a check block: how the client probes a service.
type ServiceCheck struct {
	Name string
	Type string
	// Path, Method, Header, Body and Protocol (http or https) shape an
	// http check.
	Path     string              `json:",omitempty"`
	Method   string              `json:",omitempty"`
	Header   map[string][]string `json:",omitempty"`
	Body     string              `json:",omitempty"`
	Protocol string              `json:",omitempty"`
	// TLSSkipVerify skips the certificate check of an https check.
	TLSSkipVerify bool `json:",omitempty"`
	// TLSServerName is the name expected in the certificate of an https
	// or grpc check (and sent as SNI); "" is the address dialled.
	TLSServerName string `json:",omitempty"`
	// GRPCService is the service a grpc check asks the standard health
	// service (grpc.health.v1.Health/Check) about; "" asks about the
	// server. GRPCUseTLS dials over TLS.
	GRPCService string `json:",omitempty"`
	GRPCUseTLS  bool   `json:",omitempty"`
	// PortLabel is the port probed; "" is the service's.
	PortLabel   string `json:",omitempty"`
	AddressMode string `json:",omitempty"`
	// Command and Args are run inside the task by a script check.
	Command string   `json:",omitempty"`
	Args    []string `json:",omitempty"`
	// TaskName is the task a script check of a group service runs in.
	TaskName string        `json:",omitempty"`
	Interval time.Duration `json:",omitempty"`
	Timeout  time.Duration `json:",omitempty"`
	// InitialStatus is the status before the first result.
	InitialStatus string `json:",omitempty"`
	// SuccessBeforePassing consecutive successes turn a check passing;
	// FailuresBeforeCritical consecutive failures turn it critical.
	SuccessBeforePassing   int           `json:",omitempty"`
	FailuresBeforeCritical int           `json:",omitempty"`
	OnUpdate               string        `json:",omitempty"`
	CheckRestart           *CheckRestart `json:",omitempty"`
}

// CheckRestart restarts a task whose check is critical Limit times in a
// row, not before Grace has passed since the task started.
type CheckRestart struct {
	Limit          int           `json:",omitempty"`
	Grace          time.Duration `json:",omitempty"`
	IgnoreWarnings bool          `json:",omitempty"`
}

// Copy returns a deep copy of s; nil for nil.
func (s *Service) Copy() *Service {
	if s == nil {
		return nil
	}
	c := *s
	c.Tags = slices.Clone(s.Tags)
	c.CanaryTags = slices.Clone(s.CanaryTags)
	c.Meta = maps.Clone(s.Meta)
	c.CanaryMeta = maps.Clone(s.CanaryMeta)
	if s.Checks != nil {
		c.Checks = make([]*ServiceCheck, len(s.Checks))
		for i, ch := range s.Checks {
			c.Checks[i] = ch.Copy()
		}
	}
	return &c
}

// Copy returns a deep copy of ch; nil for nil.
func (ch *ServiceCheck) Copy() *ServiceCheck {
	if ch == nil {
		return nil
	}
	c := *ch
	c.Args = slices.Clone(ch.Args)
	if ch.Header != nil {
		c.Header = make(map[string][]string, len(ch.Header))
		for k, v := range ch.Header {
			c.Header[k] = slices.Clone(v)
		}
	}
	if ch.CheckRestart != nil {
		r := *ch.CheckRestart
		c.CheckRestart = &r
	}
	return &c
}

func copyServices(ss []*Service) []*Service {
	if ss == nil {
		return nil
	}
	out := make([]*Service, len(ss))
	for i, s := range ss {
		out[i] = s.Copy()
	}
	return out
}

// Canonicalize fills in Nomad's defaults: address mode auto, on_update
// require_healthy, check protocol http and method GET, the service's
// check_restart for checks without one. taskName is the task of a task
// service ("" for a group's).
func (s *Service) Canonicalize(taskName string) {
	if s.AddressMode == "" {
		s.AddressMode = AddressModeAuto
	}
	if s.OnUpdate == "" {
		s.OnUpdate = OnUpdateRequireHealthy
	}
	if taskName != "" {
		s.TaskName = taskName
	}
	for _, ch := range s.Checks {
		if ch == nil {
			continue
		}
		if ch.Type == ServiceCheckHTTP {
			if ch.Protocol == "" {
				ch.Protocol = "http"
			}
			if ch.Method == "" {
				ch.Method = http.MethodGet
			}
		}
		if ch.OnUpdate == "" {
			ch.OnUpdate = s.OnUpdate
		}
		if ch.TaskName == "" {
			ch.TaskName = s.TaskName
		}
		if ch.AddressMode == "" {
			ch.AddressMode = AddressModeHost
		}
		if ch.Name == "" {
			ch.Name = fmt.Sprintf("service: %q check", s.Name)
		}
	}
}

// Validate checks a canonicalized service of a group (taskName "") or a
// task, given the labels of the group's ports, and returns every problem.
func (s *Service) Validate(taskName string, ports map[string]bool) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch s.Provider {
	case ServiceProviderNomad:
	case "", ServiceProviderConsul:
		add("provider %q: Consul is not supported by drover: set provider = %q to use Nomad's native service discovery", providerName(s.Provider), ServiceProviderNomad)
	default:
		add("provider %q is invalid: use %q", s.Provider, ServiceProviderNomad)
	}
	if s.Name == "" {
		add("name is missing")
	} else if !strings.Contains(s.Name, "${") && !validServiceName(s.Name) {
		add("name %q is invalid: use letters, digits and dashes (at most 63), starting with a letter or digit", s.Name)
	}
	switch s.AddressMode {
	case AddressModeAuto, AddressModeHost, AddressModeAlloc, AddressModeDriver:
	default:
		add("address_mode %q is invalid: use auto, host, alloc or driver", s.AddressMode)
	}
	if err := validOnUpdate(s.OnUpdate); err != nil {
		add("%v", err)
	}
	if s.PortLabel != "" && !ports[s.PortLabel] && !isPortNumber(s.PortLabel) {
		add("port %q is not a port label of the group's network: add it to the network block", s.PortLabel)
	}
	for i, ch := range s.Checks {
		if ch == nil {
			add("check %d is empty", i+1)
			continue
		}
		for _, err := range ch.validate(s, taskName, ports) {
			add("check %q: %v", ch.Name, err)
		}
	}
	return errs
}

func providerName(p string) string {
	if p == "" {
		return "consul (the default when unset)"
	}
	return p
}

func (ch *ServiceCheck) validate(s *Service, taskName string, ports map[string]bool) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch ch.Type {
	case ServiceCheckHTTP:
		if ch.Path == "" {
			add("an http check needs a path")
		}
		if ch.Protocol != "http" && ch.Protocol != "https" {
			add("protocol %q is invalid: use http or https", ch.Protocol)
		}
	case ServiceCheckTCP:
	case ServiceCheckScript:
		if ch.Command == "" {
			add("a script check needs a command")
		}
		if taskName == "" && ch.TaskName == "" {
			add("a script check of a group service needs task: name the task it runs in")
		}
	case ServiceCheckGRPC:
	default:
		add("type %q is invalid: use http, tcp, grpc or script", ch.Type)
	}
	if ch.Type != ServiceCheckScript {
		port := ch.PortLabel
		if port == "" {
			port = s.PortLabel
		}
		if port == "" {
			add("a %s check needs a port: set port in the service or the check", ch.Type)
		} else if !ports[port] && !isPortNumber(port) {
			add("port %q is not a port label of the group's network", port)
		}
	}
	if ch.Interval < MinCheckInterval {
		add("interval %v is below the minimum of %v", ch.Interval, MinCheckInterval)
	}
	if ch.Timeout < MinCheckTimeout {
		add("timeout %v is below the minimum of %v", ch.Timeout, MinCheckTimeout)
	}
	if ch.SuccessBeforePassing < 0 || ch.FailuresBeforeCritical < 0 {
		add("success_before_passing and failures_before_critical must not be negative")
	}
	switch ch.InitialStatus {
	case "", CheckStatusPassing, CheckStatusWarning, CheckStatusCritical:
	default:
		add("initial_status %q is invalid: use passing, warning or critical", ch.InitialStatus)
	}
	if err := validOnUpdate(ch.OnUpdate); err != nil {
		add("%v", err)
	}
	if r := ch.CheckRestart; r != nil && (r.Limit < 0 || r.Grace < 0) {
		add("check_restart limit and grace must not be negative")
	}
	return errs
}

func validOnUpdate(v string) error {
	switch v {
	case OnUpdateRequireHealthy, OnUpdateIgnoreWarn, OnUpdateIgnore:
		return nil
	}
	return fmt.Errorf("on_update %q is invalid: use require_healthy, ignore_warnings or ignore", v)
}

// validServiceName reports whether name is an RFC 1123 label, as Nomad
// requires of a service name.
func validServiceName(name string) bool {
	if name == "" || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func isPortNumber(s string) bool {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
		n = n*10 + int(r-'0')
		if n > MaxValidPort {
			return false
		}
	}
	return s != "" && n > 0
}

// HasChecks reports whether any service of the group or of its tasks has a
// check: deployments then wait for the checks (health_check "checks").
func (tg *TaskGroup) HasChecks() bool {
	for _, s := range tg.Services {
		if len(s.Checks) > 0 {
			return true
		}
	}
	for _, t := range tg.Tasks {
		for _, s := range t.Services {
			if len(s.Checks) > 0 {
				return true
			}
		}
	}
	return false
}

// servicesErrors validates the services of a group and of its tasks.
func (tg *TaskGroup) servicesErrors(group string) []error {
	ports := map[string]bool{}
	for _, n := range tg.Networks {
		for _, p := range n.ReservedPorts {
			ports[p.Label] = true
		}
		for _, p := range n.DynamicPorts {
			ports[p.Label] = true
		}
	}
	var errs []error
	taskNames := map[string]bool{}
	for _, t := range tg.Tasks {
		taskNames[t.Name] = true
	}
	for i, s := range tg.Services {
		if s == nil {
			errs = append(errs, fmt.Errorf("group %q: service %d is empty", group, i+1))
			continue
		}
		for _, err := range s.Validate("", ports) {
			errs = append(errs, fmt.Errorf("group %q, service %q: %w", group, s.Name, err))
		}
		for _, ch := range s.Checks {
			if ch != nil && ch.TaskName != "" && !taskNames[ch.TaskName] {
				errs = append(errs, fmt.Errorf("group %q, service %q, check %q: task %q is not a task of the group", group, s.Name, ch.Name, ch.TaskName))
			}
		}
	}
	for _, t := range tg.Tasks {
		taskPorts := ports
		if t.Resources != nil && len(t.Resources.Networks) > 0 {
			taskPorts = maps.Clone(ports)
			for _, n := range t.Resources.Networks {
				for _, p := range n.ReservedPorts {
					taskPorts[p.Label] = true
				}
				for _, p := range n.DynamicPorts {
					taskPorts[p.Label] = true
				}
			}
		}
		for i, s := range t.Services {
			if s == nil {
				errs = append(errs, fmt.Errorf("group %q, task %q: service %d is empty", group, t.Name, i+1))
				continue
			}
			for _, err := range s.Validate(t.Name, taskPorts) {
				errs = append(errs, fmt.Errorf("group %q, task %q, service %q: %w", group, t.Name, s.Name, err))
			}
		}
	}
	return errs
}
