package api

import (
	"encoding/json"
	"net/url"
	"time"
)

// Service is a service block of a group or a task, in Nomad's API shape.
// Only provider "nomad" is accepted by drover.
type Service struct {
	Name        string            `json:",omitempty"`
	Tags        []string          `json:",omitempty"`
	CanaryTags  []string          `json:",omitempty"`
	PortLabel   string            `json:",omitempty"`
	AddressMode string            `json:",omitempty"`
	Address     string            `json:",omitempty"`
	Checks      []ServiceCheck    `json:",omitempty"`
	Meta        map[string]string `json:",omitempty"`
	CanaryMeta  map[string]string `json:",omitempty"`
	TaskName    string            `json:",omitempty"`
	OnUpdate    string            `json:",omitempty"`
	Provider    string            `json:",omitempty"`
	// CheckRestart is the default of the service's checks' check_restart.
	CheckRestart *CheckRestart `json:",omitempty"`

	// Nomad fields drover does not implement (Consul's).
	EnableTagOverride json.RawMessage `json:",omitempty"`
	Connect           json.RawMessage `json:",omitempty"`
	TaggedAddresses   json.RawMessage `json:",omitempty"`
	Identity          json.RawMessage `json:",omitempty"`
	Cluster           json.RawMessage `json:",omitempty"`
	Weights           json.RawMessage `json:",omitempty"`
	Kind              json.RawMessage `json:",omitempty"`
}

// ServiceCheck is a check block of a service.
type ServiceCheck struct {
	Name          string        `json:",omitempty"`
	Type          string        `json:",omitempty"`
	Command       string        `json:",omitempty"`
	Args          []string      `json:",omitempty"`
	Path          string        `json:",omitempty"`
	Protocol      string        `json:",omitempty"`
	PortLabel     string        `json:",omitempty"`
	AddressMode   string        `json:",omitempty"`
	Interval      time.Duration `json:",omitempty"`
	Timeout       time.Duration `json:",omitempty"`
	InitialStatus string        `json:",omitempty"`
	TLSSkipVerify bool          `json:",omitempty"`
	// TLSServerName is the name an https or grpc check expects in the
	// task's certificate (and sends as SNI).
	TLSServerName string `json:",omitempty"`
	// GRPCService is the service name a grpc check asks the standard
	// health service about ("" is the server as a whole); GRPCUseTLS
	// dials it over TLS.
	GRPCService  string              `json:",omitempty"`
	GRPCUseTLS   bool                `json:",omitempty"`
	Header       map[string][]string `json:",omitempty"`
	Method       string              `json:",omitempty"`
	Body         string              `json:",omitempty"`
	CheckRestart *CheckRestart       `json:",omitempty"`
	TaskName     string              `json:",omitempty"`
	OnUpdate     string              `json:",omitempty"`
	// SuccessBeforePassing and FailuresBeforeCritical are how many
	// results in a row change the check's status.
	SuccessBeforePassing   int `json:",omitempty"`
	FailuresBeforeCritical int `json:",omitempty"`

	// Nomad fields drover does not implement.
	Expose                json.RawMessage `json:",omitempty"`
	Advertise             json.RawMessage `json:",omitempty"`
	Notes                 json.RawMessage `json:",omitempty"`
	FailuresBeforeWarning json.RawMessage `json:",omitempty"`
}

// CheckRestart restarts a task whose check fails Limit times in a row.
type CheckRestart struct {
	Limit          int            `json:",omitempty"`
	Grace          *time.Duration `json:",omitempty"`
	IgnoreWarnings bool           `json:",omitempty"`
}

// ServiceRegistration is one registered instance of a Nomad service.
type ServiceRegistration struct {
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int
	CreateIndex uint64
	ModifyIndex uint64
}

// ServiceRegistrationListStub is a namespace's services in a list.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is one service's name and tags in a list.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// Services reads and deletes service registrations (/v1/services,
// /v1/service/:name).
type Services struct{ c *Client }

// Services returns the service registration endpoints.
func (c *Client) Services() *Services { return &Services{c: c} }

// List lists the services of the namespace ("*": all), with their tags.
func (s *Services) List(q *QueryOptions) ([]*ServiceRegistrationListStub, *QueryMeta, error) {
	var out []*ServiceRegistrationListStub
	qm, err := s.c.query("/v1/services", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Get reads the instances of a service. q.Params may hold "choose"
// ("N|key": N instances picked by rendezvous hashing on key) and "tag".
func (s *Services) Get(serviceName string, q *QueryOptions) ([]*ServiceRegistration, *QueryMeta, error) {
	var out []*ServiceRegistration
	qm, err := s.c.query("/v1/service/"+url.PathEscape(serviceName), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Delete deletes one instance of a service.
func (s *Services) Delete(serviceName, id string, w *WriteOptions) (*WriteMeta, error) {
	return s.c.write("DELETE", "/v1/service/"+url.PathEscape(serviceName)+"/"+url.PathEscape(id), nil, nil, w)
}

// AllocCheckStatus is the latest result of one check of an allocation,
// as the node that runs it reports it (GET
// /v1/client/allocation/:id/checks, keyed by check ID).
type AllocCheckStatus struct {
	ID         string
	Check      string
	Group      string
	Mode       string
	Output     string
	Service    string
	Status     string
	StatusCode int
	Task       string
	// Timestamp is Unix seconds.
	Timestamp int64
}

// AllocCheckStatuses are an allocation's check results by check ID.
type AllocCheckStatuses map[string]AllocCheckStatus

// Checks reads the latest results of an allocation's checks from the node
// that runs it.
func (a *Allocations) Checks(allocID string, q *QueryOptions) (AllocCheckStatuses, error) {
	var out AllocCheckStatuses
	if _, err := a.c.query("/v1/client/allocation/"+url.PathEscape(allocID)+"/checks", &out, q); err != nil {
		return nil, err
	}
	return out, nil
}

// Services reads the service registrations of an allocation.
func (a *Allocations) Services(allocID string, q *QueryOptions) ([]*ServiceRegistration, *QueryMeta, error) {
	var out []*ServiceRegistration
	qm, err := a.c.query("/v1/allocation/"+url.PathEscape(allocID)+"/services", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Services reads the service registrations of a job.
func (j *Jobs) Services(jobID string, q *QueryOptions) ([]*ServiceRegistration, *QueryMeta, error) {
	var out []*ServiceRegistration
	qm, err := j.c.query("/v1/job/"+url.PathEscape(jobID)+"/services", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}
