package server

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/structs"
)

// MessageType is the first byte of a raft log entry: which command follows.
type MessageType uint8

// Raft commands. Values are persisted in raft logs: append, never reorder.
const (
	JobRegisterRequestType MessageType = iota + 1
	JobDeregisterRequestType
	EvalUpdateRequestType
	ApplyPlanResultsRequestType
	NodeRegisterRequestType
	NodeUpdateStatusRequestType
	NodeDeregisterRequestType
	AllocClientUpdateRequestType
	SchedulerConfigRequestType
)

// String names the message type for logs.
func (t MessageType) String() string {
	switch t {
	case JobRegisterRequestType:
		return "job-register"
	case JobDeregisterRequestType:
		return "job-deregister"
	case EvalUpdateRequestType:
		return "eval-update"
	case ApplyPlanResultsRequestType:
		return "apply-plan-results"
	case NodeRegisterRequestType:
		return "node-register"
	case NodeUpdateStatusRequestType:
		return "node-update-status"
	case NodeDeregisterRequestType:
		return "node-deregister"
	case AllocClientUpdateRequestType:
		return "alloc-client-update"
	case SchedulerConfigRequestType:
		return "scheduler-config"
	}
	return fmt.Sprintf("message-type-%d", uint8(t))
}

// JobRegisterCommand stores a job and its registration evaluation; the FSM
// sets the eval's JobModifyIndex to the entry's index.
type JobRegisterCommand struct {
	Job  *structs.Job
	Eval *structs.Evaluation
}

// JobDeregisterCommand stops (Job holds the stopped version) or, with Purge,
// deletes a job, and stores the deregistration evaluation.
type JobDeregisterCommand struct {
	Namespace string
	JobID     string
	Purge     bool
	Job       *structs.Job
	Eval      *structs.Evaluation
}

// EvalUpdateCommand stores evaluations.
type EvalUpdateCommand struct {
	Evals []*structs.Evaluation
}

// PlanResultCommand commits a plan: new and stopped allocations, and the
// evaluations that record its outcome (may be empty for a partial commit).
type PlanResultCommand struct {
	Allocs []*structs.Allocation
	Evals  []*structs.Evaluation
	// Deployments created or changed by the plan; one turning successful
	// marks its job version stable.
	Deployments []*structs.Deployment
}

// SchedulerConfigCommand sets the scheduler configuration; with CAS only
// if its ModifyIndex is the stored one's.
type SchedulerConfigCommand struct {
	Config structs.SchedulerConfiguration
	CAS    bool
}

// NodeRegisterCommand stores a node and the evaluations its change needs.
type NodeRegisterCommand struct {
	Node  *structs.Node
	Evals []*structs.Evaluation
}

// NodeStatusCommand sets a node's status; LostAllocs are client-style
// updates marking its allocations lost when it went down.
type NodeStatusCommand struct {
	NodeID     string
	Status     string
	UpdatedAt  int64
	LostAllocs []*structs.Allocation
	Evals      []*structs.Evaluation
}

// NodeDeregisterCommand removes a node.
type NodeDeregisterCommand struct {
	NodeID string
}

// AllocClientUpdateCommand applies client-reported allocation state.
type AllocClientUpdateCommand struct {
	Allocs []*structs.Allocation
	Evals  []*structs.Evaluation
}

// newMsgpackHandle returns the codec handle of raft entries and snapshots.
func newMsgpackHandle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	// Only "codec" tags: json:"-" fields (a node's SecretID) must survive
	// in raft entries and in the requests a node sends. No response of the
	// server carries a node's secret (NodeGet strips it).
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	h.MapType = reflect.TypeOf(map[string]any(nil))
	h.RawToString = true
	h.Canonical = true
	return h
}

// encodeCommand returns a raft entry: the type byte and the msgpack body.
func encodeCommand(h *codec.MsgpackHandle, t MessageType, req any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(byte(t))
	if err := codec.NewEncoder(&buf, h).Encode(req); err != nil {
		return nil, fmt.Errorf("encode %s command: %w", t, err)
	}
	return buf.Bytes(), nil
}

// decodeBody decodes a command's msgpack body into out.
func decodeBody(h *codec.MsgpackHandle, body []byte, out any) error {
	return codec.NewDecoderBytes(body, h).Decode(out)
}
