package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of periodic and parameterized jobs.
var (
	// JobPeriodicForce launches a periodic job's child now, whatever its
	// schedule and prohibit_overlap.
	JobPeriodicForce = deduplicated[structs.PeriodicForceRequest, structs.PeriodicForceResponse]("JobPeriodicForce")
	// JobDispatch instantiates a parameterized job with a payload and
	// metadata.
	JobDispatch = deduplicated[structs.JobDispatchRequest, structs.JobDispatchResponse]("JobDispatch")
)

func periodicMethods() []*Info { return []*Info{JobPeriodicForce.info, JobDispatch.info} }
