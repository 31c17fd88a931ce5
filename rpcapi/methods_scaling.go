package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of scaling and version tags (the jobfile work): a group's count set by `job scale` or an
// autoscaler, the groups' scale status and events, and the scaling
// policies of the jobs' scaling blocks.
var (
	// JobScale sets a group's count (a new job version with an
	// evaluation), or records a scaling event only.
	JobScale = deduplicated[structs.JobScaleRequest, structs.JobRegisterResponse]("JobScale")
	// JobScaleStatus reads a job's groups' counts, allocations and
	// scaling events.
	JobScaleStatus = read[structs.JobSpecificRequest, structs.JobScaleStatusResponse]("JobScaleStatus")
	// ScalingPolicyList lists scaling policies.
	ScalingPolicyList = read[structs.ScalingPolicyListRequest, structs.ScalingPolicyListResponse]("ScalingPolicyList")
	// ScalingPolicyGet reads one scaling policy by ID.
	ScalingPolicyGet = read[structs.ScalingPolicySpecificRequest, structs.SingleScalingPolicyResponse]("ScalingPolicyGet")
	// JobTagVersion applies or removes a job version tag.
	JobTagVersion = deduplicated[structs.JobTagRequest, structs.JobTagResponse]("JobTagVersion")
)

// scalingMethods returns the methods of this file, for All.
func scalingMethods() []*Info {
	return []*Info{JobScale.info, JobScaleStatus.info, ScalingPolicyList.info, ScalingPolicyGet.info, JobTagVersion.info}
}
