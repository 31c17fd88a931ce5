package rpcapi

import "github.com/drover-io/drover/structs"

// The methods a node's client calls: its registration, heartbeats, the
// blocking query for its allocations and the reports of their state.
var (
	// NodeRegister registers or re-registers a node. Idempotent: the
	// server stores the node again and creates evaluations only when its
	// status changed.
	NodeRegister = idempotent[structs.NodeRegisterRequest, structs.NodeUpdateResponse]("NodeRegister")
	// NodeUpdateStatus is a heartbeat. Idempotent: a status equal to the
	// stored one changes nothing but the node's TTL.
	NodeUpdateStatus = idempotent[structs.NodeUpdateStatusRequest, structs.NodeUpdateResponse]("NodeUpdateStatus")
	// NodeGetClientAllocs is the blocking query of a node's allocations
	// (alloc ID -> AllocModifyIndex).
	NodeGetClientAllocs = read[structs.NodeSpecificRequest, structs.NodeClientAllocsResponse]("NodeGetClientAllocs")
	// AllocGetAllocs reads full allocations by ID.
	AllocGetAllocs = read[structs.AllocsGetRequest, structs.AllocsGetResponse]("AllocGetAllocs")
	// NodeUpdateAlloc reports allocations' client state. Idempotent: the
	// server compares each update with the stored allocation and creates
	// evaluations only for a change (a new failure, a health change).
	NodeUpdateAlloc = idempotent[structs.AllocUpdateRequest, structs.GenericResponse]("NodeUpdateAlloc")
	// NodeGet reads one node by ID or unique prefix (a client looks up the
	// HTTP address of the node a previous allocation ran on).
	NodeGet = read[structs.NodeSpecificRequest, structs.SingleNodeResponse]("NodeGet")
	// AllocRestartLease takes or gives back the lease a client holds
	// while it restarts a task after a template re-render. Idempotent:
	// asking again for a lease held renews it; giving back one not held
	// changes nothing.
	AllocRestartLease = idempotent[structs.AllocRestartLeaseRequest, structs.AllocRestartLeaseResponse]("AllocRestartLease")
)

// The methods behind the HTTP API: jobs, allocations, evaluations, nodes,
// deployments, plans, versions and the scheduler configuration.
var (
	// JobRegister creates or updates a job with an evaluation.
	JobRegister = deduplicated[structs.JobRegisterRequest, structs.JobRegisterResponse]("JobRegister")
	// JobEvaluate creates an evaluation of an existing job.
	JobEvaluate = deduplicated[structs.JobEvaluateRequest, structs.JobRegisterResponse]("JobEvaluate")
	// JobDeregister stops a job, or with Purge deletes it.
	JobDeregister = deduplicated[structs.JobDeregisterRequest, structs.JobDeregisterResponse]("JobDeregister")
	// JobGet reads one job by ID or unique ID prefix.
	JobGet = read[structs.JobSpecificRequest, structs.SingleJobResponse]("JobGet")
	// JobList lists jobs with their summaries.
	JobList = read[structs.JobListRequest, structs.JobListResponse]("JobList")
	// JobAllocations lists a job's allocations.
	JobAllocations = read[structs.JobSpecificRequest, structs.JobAllocationsResponse]("JobAllocations")
	// JobEvaluations lists a job's evaluations.
	JobEvaluations = read[structs.JobSpecificRequest, structs.JobEvaluationsResponse]("JobEvaluations")
	// JobSummary reads a job's allocation counts per group.
	JobSummary = read[structs.JobSpecificRequest, structs.JobSummaryResponse]("JobSummary")
	// JobVersions lists the kept versions of a job.
	JobVersions = read[structs.JobVersionsRequest, structs.JobVersionsResponse]("JobVersions")
	// JobRevert registers a kept version of a job again.
	JobRevert = deduplicated[structs.JobRevertRequest, structs.JobRegisterResponse]("JobRevert")
	// JobPlan dry-runs the scheduler for a job. Idempotent: it commits
	// nothing.
	JobPlan = idempotent[structs.JobPlanRequest, structs.JobPlanResponse]("JobPlan")
	// JobValidate checks a job as a registration would (structure, task
	// config blocks against the drivers' schemas). Idempotent: it stores
	// nothing.
	JobValidate = idempotent[structs.JobValidateRequest, structs.JobValidateResponse]("JobValidate")
	// AllocList lists allocations.
	AllocList = read[structs.AllocListRequest, structs.AllocListResponse]("AllocList")
	// AllocGet reads one allocation by ID or unique ID prefix.
	AllocGet = read[structs.AllocSpecificRequest, structs.SingleAllocResponse]("AllocGet")
	// AllocTimeline reads the servers' part of an allocation's timeline
	// (by full ID): the steps of the evaluation that placed it and of its
	// placement, as this server recorded them in memory.
	AllocTimeline = read[structs.AllocSpecificRequest, structs.AllocTimelineResponse]("AllocTimeline")
	// AllocNode reads an allocation (by ID or unique ID prefix) with the
	// node it is placed on.
	AllocNode = read[structs.AllocSpecificRequest, structs.AllocNodeResponse]("AllocNode")
	// AllocStop stops an allocation (by ID or unique ID prefix); the
	// scheduler replaces it.
	AllocStop = deduplicated[structs.AllocStopRequest, structs.AllocStopResponse]("AllocStop")
	// EvalList lists evaluations.
	EvalList = read[structs.EvalListRequest, structs.EvalListResponse]("EvalList")
	// EvalGet reads one evaluation by ID or unique ID prefix.
	EvalGet = read[structs.EvalSpecificRequest, structs.SingleEvalResponse]("EvalGet")
	// EvalAllocations lists the allocations an evaluation (by ID or
	// unique ID prefix) placed.
	EvalAllocations = read[structs.EvalSpecificRequest, structs.AllocListResponse]("EvalAllocations")
	// NodeList lists nodes.
	NodeList = read[structs.NodeListRequest, structs.NodeListResponse]("NodeList")
	// NodeAllocations reads the allocations placed on a node (by ID or
	// unique ID prefix).
	NodeAllocations = read[structs.NodeSpecificRequest, structs.AllocsGetResponse]("NodeAllocations")
	// DeploymentList lists deployments, all or one job's (which must
	// exist).
	DeploymentList = read[structs.DeploymentListRequest, structs.DeploymentListResponse]("DeploymentList")
	// DeploymentGet reads one deployment, or a job's latest (the job
	// must exist).
	DeploymentGet = read[structs.DeploymentSpecificRequest, structs.SingleDeploymentResponse]("DeploymentGet")
	// DeploymentAllocations lists the allocations a deployment placed.
	DeploymentAllocations = read[structs.DeploymentSpecificRequest, structs.AllocListResponse]("DeploymentAllocations")
	// DeploymentFail fails an active deployment, reverting its job when
	// auto_revert says so. At most once: failing it again is an error.
	DeploymentFail = atMostOnce[structs.DeploymentFailRequest, structs.DeploymentUpdateResponse]("DeploymentFail")
	// DeploymentPause pauses or resumes an active deployment. At most
	// once: each resume creates an evaluation.
	DeploymentPause = atMostOnce[structs.DeploymentPauseRequest, structs.DeploymentUpdateResponse]("DeploymentPause")
	// DeploymentPromote promotes the canaries of an active deployment.
	// At most once: each promotion creates an evaluation.
	DeploymentPromote = atMostOnce[structs.DeploymentPromoteRequest, structs.DeploymentUpdateResponse]("DeploymentPromote")
	// SchedulerGetConfig reads the scheduler configuration.
	SchedulerGetConfig = read[structs.SchedulerConfigRequest, structs.SchedulerConfigResponse]("SchedulerGetConfig")
	// SchedulerSetConfig sets the scheduler configuration (with CAS, only
	// over the given ModifyIndex).
	SchedulerSetConfig = deduplicated[structs.SchedulerSetConfigRequest, structs.SchedulerSetConfigResponse]("SchedulerSetConfig")
	// NamespaceList lists namespaces, the default one included.
	NamespaceList = read[structs.NamespaceListRequest, structs.NamespaceListResponse]("NamespaceList")
	// NamespaceGet reads one namespace by name.
	NamespaceGet = read[structs.NamespaceSpecificRequest, structs.SingleNamespaceResponse]("NamespaceGet")
	// NamespaceUpsert creates or updates namespaces.
	NamespaceUpsert = deduplicated[structs.NamespaceUpsertRequest, structs.NamespaceWriteResponse]("NamespaceUpsert")
	// NamespaceDelete deletes namespaces that hold no live job.
	NamespaceDelete = deduplicated[structs.NamespaceDeleteRequest, structs.NamespaceWriteResponse]("NamespaceDelete")
	// NodePoolList lists node pools, the built-in ones included.
	NodePoolList = read[structs.NodePoolListRequest, structs.NodePoolListResponse]("NodePoolList")
	// NodePoolGet reads one node pool by name.
	NodePoolGet = read[structs.NodePoolSpecificRequest, structs.SingleNodePoolResponse]("NodePoolGet")
	// NodePoolUpsert creates or updates node pools.
	NodePoolUpsert = deduplicated[structs.NodePoolUpsertRequest, structs.NodePoolWriteResponse]("NodePoolUpsert")
	// NodePoolDelete deletes node pools that hold no node nor live job.
	NodePoolDelete = deduplicated[structs.NodePoolDeleteRequest, structs.NodePoolWriteResponse]("NodePoolDelete")
)

// All returns every declared method: the server serves each of them.
func All() []*Info {
	return append([]*Info{
		NodeRegister.info, NodeUpdateStatus.info, NodeGetClientAllocs.info, AllocGetAllocs.info,
		NodeUpdateAlloc.info, NodeGet.info, AllocRestartLease.info,
		JobRegister.info, JobEvaluate.info, JobDeregister.info, JobGet.info, JobList.info, JobAllocations.info,
		JobEvaluations.info, JobSummary.info, JobVersions.info, JobRevert.info, JobPlan.info,
		AllocList.info, AllocGet.info, AllocTimeline.info, AllocNode.info, AllocStop.info, EvalList.info, EvalGet.info, EvalAllocations.info,
		NodeList.info, NodeAllocations.info,
		DeploymentList.info, DeploymentGet.info, DeploymentAllocations.info, DeploymentFail.info, DeploymentPause.info,
		DeploymentPromote.info,
		SchedulerGetConfig.info, SchedulerSetConfig.info,
		VarList.info, VarGet.info, VarApply.info, KeyringList.info, KeyringRotate.info, KeyringDelete.info,
		KeyringPublicKeys.info,
		NamespaceList.info, NamespaceGet.info, NamespaceUpsert.info, NamespaceDelete.info,
		NodePoolList.info, NodePoolGet.info, NodePoolUpsert.info, NodePoolDelete.info,
	}, append(append(append(append(append(clusterMethods(), identityMethods()...), scalingMethods()...), nodeMethods()...), periodicMethods()...), append(append(append(aclMethods(), opsMethods()...), aclAuthMethods()...), gossipMethods()...)...)...)
}
