package structs

import (
	"fmt"
	"slices"
)

// Check statuses of a check block's initial_status (Consul's words, which
// Nomad's job files use).
const (
	CheckStatusPassing  = "passing"
	CheckStatusWarning  = "warning"
	CheckStatusCritical = "critical"
)

// Check result statuses (CheckQueryResult.Status), as Nomad's native
// checks report them.
const (
	CheckResultSuccess = "success"
	CheckResultFailure = "failure"
	CheckResultPending = "pending"
)

// Check modes (CheckQueryResult.Mode): whether the check decides the
// allocation's health (on_update require_healthy or ignore_warnings) or is
// only informative (on_update ignore).
const (
	CheckModeHealthiness = "healthiness"
	CheckModeReadiness   = "readiness"
)

// ServiceRegistration is one registered instance of a Nomad service: an
// allocation's address and port under a service name. Its field names and
// JSON are those of Nomad's api.ServiceRegistration.
type ServiceRegistration struct {
	// ID is unique in the namespace (ServiceRegistrationID).
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

// Copy returns a deep copy of r; nil for nil.
func (r *ServiceRegistration) Copy() *ServiceRegistration {
	if r == nil {
		return nil
	}
	c := *r
	c.Tags = slices.Clone(r.Tags)
	return &c
}

// Equal reports whether r and o register the same thing (indexes aside).
func (r *ServiceRegistration) Equal(o *ServiceRegistration) bool {
	if r == nil || o == nil {
		return r == o
	}
	return r.ID == o.ID && r.ServiceName == o.ServiceName && r.Namespace == o.Namespace &&
		r.NodeID == o.NodeID && r.Datacenter == o.Datacenter && r.JobID == o.JobID &&
		r.AllocID == o.AllocID && slices.Equal(r.Tags, o.Tags) && r.Address == o.Address && r.Port == o.Port
}

// Validate checks what a client sends.
func (r *ServiceRegistration) Validate() error {
	switch {
	case r.ID == "":
		return Invalid("service registration: ID is missing")
	case r.ServiceName == "":
		return Invalid("service registration %q: ServiceName is missing", r.ID)
	case r.AllocID == "" || r.NodeID == "" || r.JobID == "":
		return Invalid("service registration %q: AllocID, NodeID and JobID are required", r.ID)
	case r.Port < 0 || r.Port > MaxValidPort:
		return Invalid("service registration %q: port %d is out of range", r.ID, r.Port)
	}
	return nil
}

// ServiceRegistrationID is the ID of the registration of service (with
// port label portLabel) by the task (or, for a group service, "group-" and
// the group's name) of allocation allocID: the same instance always gets
// the same ID, so that registering it again replaces it.
func ServiceRegistrationID(allocID, owner, service, portLabel string) string {
	return fmt.Sprintf("_nomad-task-%s-%s-%s-%s", allocID, owner, service, portLabel)
}

// ServiceRegistrationListStub is one namespace's services in a list: each
// service's name and the union of its instances' tags.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is a service's name and tags in a list.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// ServiceRegistrationUpsertRequest registers (or registers again) service
// instances; a node sends those of its running allocations.
type ServiceRegistrationUpsertRequest struct {
	// NodeID and SecretID authenticate the node; every service must be
	// one of its allocations'.
	NodeID   string
	SecretID string
	Services []*ServiceRegistration
	WriteRequest
}

// ServiceRegistrationUpsertResponse answers ServiceRegistrationUpsertRequest.
type ServiceRegistrationUpsertResponse struct {
	// Index is the raft index of the write (0 when nothing changed).
	Index uint64
}

// ServiceRegistrationDeleteRequest deletes service registrations: by ID
// in a namespace (the HTTP API), or every one of AllocIDs (a node whose
// tasks stopped).
type ServiceRegistrationDeleteRequest struct {
	// NodeID and SecretID authenticate a node deleting its allocations'
	// registrations (AllocIDs).
	NodeID    string
	SecretID  string
	Namespace string
	IDs       []string
	AllocIDs  []string
	WriteRequest
}

// ServiceRegistrationDeleteResponse answers ServiceRegistrationDeleteRequest.
type ServiceRegistrationDeleteResponse struct {
	Index uint64
	// Deleted is how many registrations were removed.
	Deleted int
}

// ServiceRegistrationListRequest lists the services of a namespace ("*":
// all).
type ServiceRegistrationListRequest struct {
	QueryOptions
}

// ServiceRegistrationListResponse answers ServiceRegistrationListRequest.
type ServiceRegistrationListResponse struct {
	Services []*ServiceRegistrationListStub
	QueryMeta
}

// ServiceRegistrationByNameRequest reads a service's instances in a
// namespace, or those of an allocation (AllocID) or of a job (JobID, in
// the namespace), ServiceName empty.
type ServiceRegistrationByNameRequest struct {
	ServiceName string
	AllocID     string
	JobID       string
	QueryOptions
}

// ServiceRegistrationByNameResponse answers ServiceRegistrationByNameRequest.
type ServiceRegistrationByNameResponse struct {
	Services []*ServiceRegistration
	QueryMeta
}

// CheckQueryResult is the latest result of one check of a Nomad service,
// as the client that runs it reports it (GET
// /v1/client/allocation/:id/checks); the JSON is Nomad's.
type CheckQueryResult struct {
	ID     string
	Mode   string
	Status string
	// StatusCode is an http check's response status.
	StatusCode int `json:",omitempty"`
	Output     string
	// Timestamp is Unix seconds.
	Timestamp int64
	Group     string
	Task      string `json:",omitempty"`
	Service   string
	Check     string
}

// Copy returns a copy of r; nil for nil.
func (r *CheckQueryResult) Copy() *CheckQueryResult {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}
