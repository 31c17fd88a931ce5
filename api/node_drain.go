package api

import (
	"net/http"
	"net/url"
	"time"
)

// DrainSpec is what a drain asks: a deadline (0: none; negative: force
// now) and whether system jobs stay.
type DrainSpec struct {
	Deadline         time.Duration
	IgnoreSystemJobs bool
}

// DrainStrategy is a node's drain in progress.
type DrainStrategy struct {
	DrainSpec
	ForceDeadline time.Time
	StartedAt     time.Time
}

// DrainMetadata records a node's last drain.
type DrainMetadata struct {
	StartedAt time.Time
	UpdatedAt time.Time
	Status    string
	Meta      map[string]string
}

// NodeUpdateDrainRequest is the body of PUT /v1/node/:id/drain.
type NodeUpdateDrainRequest struct {
	NodeID string
	// DrainSpec starts a drain; nil stops the node's drain.
	DrainSpec *DrainSpec
	// MarkEligible makes the node eligible again when DrainSpec is nil.
	MarkEligible bool
	Meta         map[string]string
}

// NodeDrainUpdateResponse answers a drain or eligibility change.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeUpdateEligibilityRequest is the body of PUT
// /v1/node/:id/eligibility.
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
}

// NodeEligibilityUpdateResponse answers an eligibility change.
type NodeEligibilityUpdateResponse = NodeDrainUpdateResponse

// UpdateDrain starts (spec not nil) or stops a node's drain; stopping it
// with markEligible makes the node eligible again.
func (n *Nodes) UpdateDrain(nodeID string, spec *DrainSpec, markEligible bool, w *WriteOptions) (*NodeDrainUpdateResponse, error) {
	return n.UpdateDrainOpts(nodeID, &NodeUpdateDrainRequest{DrainSpec: spec, MarkEligible: markEligible}, w)
}

// UpdateDrainOpts is UpdateDrain with the whole request (Meta included).
func (n *Nodes) UpdateDrainOpts(nodeID string, req *NodeUpdateDrainRequest, w *WriteOptions) (*NodeDrainUpdateResponse, error) {
	body := *req
	body.NodeID = nodeID
	var resp NodeDrainUpdateResponse
	wm, err := n.c.write(http.MethodPut, "/v1/node/"+url.PathEscape(nodeID)+"/drain", &body, &resp, w)
	if err != nil {
		return nil, err
	}
	resp.WriteMeta = *wm
	return &resp, nil
}

// ToggleEligibility makes a node eligible or ineligible for scheduling.
func (n *Nodes) ToggleEligibility(nodeID string, eligible bool, w *WriteOptions) (*NodeEligibilityUpdateResponse, error) {
	e := NodeSchedulingIneligible
	if eligible {
		e = NodeSchedulingEligible
	}
	var resp NodeEligibilityUpdateResponse
	wm, err := n.c.write(http.MethodPut, "/v1/node/"+url.PathEscape(nodeID)+"/eligibility",
		&NodeUpdateEligibilityRequest{NodeID: nodeID, Eligibility: e}, &resp, w)
	if err != nil {
		return nil, err
	}
	resp.WriteMeta = *wm
	return &resp, nil
}

// DesiredTransition is what was asked of an allocation beyond its desired
// status; each field is nil until asked.
type DesiredTransition struct {
	Migrate         *bool
	Reschedule      *bool
	ForceReschedule *bool
	NoShutdownDelay *bool
}

// ReconcileSummaries makes the servers recompute every job's summary (PUT
// /v1/system/reconcile/summaries).
func (s *System) ReconcileSummaries() error {
	_, err := s.c.write(http.MethodPut, "/v1/system/reconcile/summaries", nil, nil, nil)
	return err
}
