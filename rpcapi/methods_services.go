package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of Nomad service registrations. A node registers and
// deregisters its allocations' instances (authenticated by its secret);
// the HTTP API lists, reads and deletes them.
var (
	// ServiceRegistrationUpsert registers service instances. Idempotent:
	// an instance has a stable ID, and registering it again replaces it.
	ServiceRegistrationUpsert = idempotent[structs.ServiceRegistrationUpsertRequest, structs.ServiceRegistrationUpsertResponse]("ServiceRegistrationUpsert")
	// ServiceRegistrationDelete deletes instances by ID or by allocation.
	// Idempotent: deleting what is gone again deletes nothing.
	ServiceRegistrationDelete = idempotent[structs.ServiceRegistrationDeleteRequest, structs.ServiceRegistrationDeleteResponse]("ServiceRegistrationDelete")
	// ServiceRegistrationList lists the services of a namespace with
	// their tags.
	ServiceRegistrationList = read[structs.ServiceRegistrationListRequest, structs.ServiceRegistrationListResponse]("ServiceRegistrationList")
	// ServiceRegistrationGet reads a service's instances, or an
	// allocation's.
	ServiceRegistrationGet = read[structs.ServiceRegistrationByNameRequest, structs.ServiceRegistrationByNameResponse]("ServiceRegistrationGet")
)
