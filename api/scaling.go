package api

import "net/url"

// ScalingPolicy is a group's (horizontal) or a task's (vertical_cpu,
// vertical_mem) scaling block, as GET /v1/scaling/policy/:id returns it
// and as a job's TaskGroup.Scaling holds it.
type ScalingPolicy struct {
	ID          string            `json:",omitempty"`
	Namespace   string            `json:",omitempty"`
	Type        string            `json:",omitempty"`
	Target      map[string]string `json:",omitempty"`
	Min         *int64            `json:",omitempty"`
	Max         *int64            `json:",omitempty"`
	Policy      map[string]any    `json:",omitempty"`
	Enabled     *bool             `json:",omitempty"`
	CreateIndex uint64            `json:",omitempty"`
	ModifyIndex uint64            `json:",omitempty"`
}

// ScalingPolicyListStub is one entry of GET /v1/scaling/policies.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// ScalingEvent is one scaling request recorded for a group.
type ScalingEvent struct {
	Count         *int64
	PreviousCount int64
	Error         bool
	Message       string
	Meta          map[string]any
	EvalID        *string
	// Time is Unix nanoseconds.
	Time        uint64
	CreateIndex uint64
}

// TaskGroupScaleStatus is one group's count, allocations and events.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []ScalingEvent
}

// JobScaleStatusResponse is GET /v1/job/:id/scale.
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]TaskGroupScaleStatus
}

// ScalingRequest is the body of POST /v1/job/:id/scale: Target names the
// group ({"Group": "web"}); Count nil records an event only.
type ScalingRequest struct {
	Count          *int64
	Target         map[string]string
	Message        string
	Error          bool
	Meta           map[string]any
	PolicyOverride bool
	EnforceIndex   bool   `json:",omitempty"`
	JobModifyIndex uint64 `json:",omitempty"`
	Namespace      string `json:",omitempty"`
}

// Scale sets a group's count (count nil: records the message as an event
// only) and returns the registration's evaluation.
func (j *Jobs) Scale(jobID, group string, count *int, message string, isError bool, meta map[string]any, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	req := &ScalingRequest{Target: map[string]string{"Group": group}, Message: message, Error: isError, Meta: meta}
	if count != nil {
		c := int64(*count)
		req.Count = &c
	}
	var resp JobRegisterResponse
	wm, err := j.c.write("POST", "/v1/job/"+url.PathEscape(jobID)+"/scale", req, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// ScaleRequest sends a scaling request as it is (POST /v1/job/:id/scale)
// and decodes the answer into resp.
func (j *Jobs) ScaleRequest(jobID string, req *ScalingRequest, resp *JobRegisterResponse, w *WriteOptions) (*WriteMeta, error) {
	return j.c.write("POST", "/v1/job/"+url.PathEscape(jobID)+"/scale", req, resp, w)
}

// ScaleStatus returns the job's groups' counts, allocations and scaling
// events.
func (j *Jobs) ScaleStatus(jobID string, q *QueryOptions) (*JobScaleStatusResponse, *QueryMeta, error) {
	var resp JobScaleStatusResponse
	qm, err := j.c.query("/v1/job/"+url.PathEscape(jobID)+"/scale", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// Scaling is the scaling policy endpoints of the API.
type Scaling struct{ c *Client }

// Scaling returns the scaling policy endpoints.
func (c *Client) Scaling() *Scaling { return &Scaling{c: c} }

// ListPolicies lists scaling policies; q.Params may hold "job" and "type".
func (s *Scaling) ListPolicies(q *QueryOptions) ([]*ScalingPolicyListStub, *QueryMeta, error) {
	var resp []*ScalingPolicyListStub
	qm, err := s.c.query("/v1/scaling/policies", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return resp, qm, nil
}

// GetPolicy reads one scaling policy by ID.
func (s *Scaling) GetPolicy(id string, q *QueryOptions) (*ScalingPolicy, *QueryMeta, error) {
	var resp ScalingPolicy
	qm, err := s.c.query("/v1/scaling/policy/"+url.PathEscape(id), &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// JobVersionTag names a version of a job (Job.VersionTag).
type JobVersionTag struct {
	Name        string
	Description string
	TaggedTime  int64
}

// TagVersionRequest is the body of PUT /v1/job/:id/versions/:name/tag.
type TagVersionRequest struct {
	Version     *uint64 `json:",omitempty"`
	Description string  `json:",omitempty"`
}

// TagVersion tags a version of the job (the current one when version is
// nil) with name.
func (j *Jobs) TagVersion(jobID, name, description string, version *uint64, w *WriteOptions) (*WriteMeta, error) {
	return j.TagVersionResp(jobID, name, description, version, nil, w)
}

// TagVersionResp is TagVersion decoding the answer ({"Version": n}, the
// version tagged) into resp.
func (j *Jobs) TagVersionResp(jobID, name, description string, version *uint64, resp any, w *WriteOptions) (*WriteMeta, error) {
	return j.c.write("PUT", "/v1/job/"+url.PathEscape(jobID)+"/versions/"+url.PathEscape(name)+"/tag",
		&TagVersionRequest{Version: version, Description: description}, resp, w)
}

// UntagVersion removes the tag name from the job's version that has it.
func (j *Jobs) UntagVersion(jobID, name string, w *WriteOptions) (*WriteMeta, error) {
	return j.c.write("DELETE", "/v1/job/"+url.PathEscape(jobID)+"/versions/"+url.PathEscape(name)+"/tag", nil, nil, w)
}
