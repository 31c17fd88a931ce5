package structs

import "time"

// AllocRestartLeaseRequest asks the servers for a restart lease of an
// allocation, or gives it back (Release). A client takes one before it
// restarts a task because a template re-rendered, so that a change every
// allocation of a job reads does not restart them all at once: a group
// holds at most its update.max_parallel leases (see
// docs/templates.md).
type AllocRestartLeaseRequest struct {
	NodeID   string
	SecretID string
	AllocID  string
	// Release gives the lease back.
	Release bool
}

// AllocRestartLeaseResponse answers an AllocRestartLeaseRequest.
type AllocRestartLeaseResponse struct {
	// Granted: the allocation holds a lease now (also when the group
	// needs none: no max_parallel). Always true for a release.
	Granted bool
	// TTL is how long a granted lease lasts unless released first (0 when
	// the group needs none); the servers give it to another allocation
	// after that, so a client that died holds nothing for long.
	TTL time.Duration
	// RetryIn is, when not granted, how long to wait before asking again.
	RetryIn time.Duration
	// Holders and Limit are the group's leases held (by others when not
	// granted) and its max_parallel, for the task event.
	Holders int
	Limit   int
}
