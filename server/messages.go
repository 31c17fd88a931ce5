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
	WriteOnceRequestType
	// Variables and the keyring (fsm_variables.go).
	VarSetRequestType
	VarDeleteRequestType
	VarRekeyRequestType
	RootKeyAddRequestType
	RootKeyDeleteRequestType
	VarLockRequestType
	ClusterMetaRequestType
	AutopilotConfigRequestType
	// Service registrations (fsm_services.go).
	ServiceUpsertRequestType
	ServiceDeleteRequestType
	NamespaceUpsertRequestType
	NamespaceDeleteRequestType
	// A scaling event without a count change (jobfile: job_scale.go).
	JobScalingEventRequestType
	// A job version tag applied or removed (jobfile: job_version_tag.go).
	JobVersionTagRequestType
	// Drains, eligibility and the server's garbage collection
	// (fsm_nodes.go; issue 15, nodes).
	NodeUpdateDrainRequestType
	AllocDesiredTransitionRequestType
	GCRequestType
	// Node pools (canary: node_pool_endpoint.go).
	NodePoolUpsertRequestType
	NodePoolDeleteRequestType
	// ACLs (fsm_acl.go), added with issue 16's ACLs.
	ACLBootstrapRequestType
	ACLPolicyUpsertRequestType
	ACLPolicyDeleteRequestType
	ACLTokenUpsertRequestType
	ACLTokenDeleteRequestType
	ACLRoleUpsertRequestType
	ACLRoleDeleteRequestType
	ACLServerSecretRequestType
	// Evaluations deleted by an operator while the eval broker is paused
	// (eval_delete.go).
	EvalDeleteRequestType
	// Logins: auth methods, binding rules, one-time tokens
	// (fsm_acl_auth.go), added with issue 16's logins.
	ACLAuthMethodUpsertRequestType
	ACLAuthMethodDeleteRequestType
	ACLBindingRuleUpsertRequestType
	ACLBindingRuleDeleteRequestType
	OneTimeTokenUpsertRequestType
	OneTimeTokenExchangeRequestType
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
	case WriteOnceRequestType:
		return "write-once"
	case VarSetRequestType:
		return "var-set"
	case VarDeleteRequestType:
		return "var-delete"
	case VarRekeyRequestType:
		return "var-rekey"
	case RootKeyAddRequestType:
		return "root-key-add"
	case RootKeyDeleteRequestType:
		return "root-key-delete"
	case VarLockRequestType:
		return "var-lock"
	case ClusterMetaRequestType:
		return "cluster-meta"
	case NamespaceUpsertRequestType:
		return "namespace-upsert"
	case NamespaceDeleteRequestType:
		return "namespace-delete"
	case NodePoolUpsertRequestType:
		return "node-pool-upsert"
	case NodePoolDeleteRequestType:
		return "node-pool-delete"
	case AutopilotConfigRequestType:
		return "autopilot-config"
	case ServiceUpsertRequestType:
		return "service-upsert"
	case ServiceDeleteRequestType:
		return "service-delete"
	case JobScalingEventRequestType:
		return "job-scaling-event"
	case JobVersionTagRequestType:
		return "job-version-tag"
	case NodeUpdateDrainRequestType:
		return "node-update-drain"
	case AllocDesiredTransitionRequestType:
		return "alloc-desired-transition"
	case GCRequestType:
		return "gc"
	}
	if t == EvalDeleteRequestType {
		return "eval-delete"
	}
	if name, ok := aclMessageNames[t]; ok {
		return name
	}
	if name, ok := aclAuthMessageNames[t]; ok {
		return name
	}
	return fmt.Sprintf("message-type-%d", uint8(t))
}

// JobScalingEventCommand records a scaling event of a job's group that
// changed no count.
type JobScalingEventCommand struct {
	Namespace string
	JobID     string
	Group     string
	Event     *structs.ScalingEvent
}

// JobVersionTagCommand applies a tag to a kept version of a job, or with
// a nil Tag removes that version's tag.
type JobVersionTagCommand struct {
	Namespace string
	JobID     string
	Version   uint64
	Tag       *structs.JobVersionTag
}

// JobRegisterCommand stores a job and its registration evaluation; the FSM
// sets the eval's JobModifyIndex to the entry's index.
type JobRegisterCommand struct {
	Job  *structs.Job
	Eval *structs.Evaluation
	// Submission is the job file the version was registered from (nil:
	// none sent, or too large to keep); kept with the version.
	Submission *structs.JobSubmission
	// CheckNamespace refuses the job when its namespace does not exist.
	// Entries written before namespaces existed lack it, and replay as
	// they applied then.
	CheckNamespace bool
	// PeriodicLaunch, for a child launched from a periodic job, records
	// the parent's launch in the same transaction (periodic.go). Eval is
	// nil for a periodic or parameterized job, which is never scheduled.
	PeriodicLaunch *structs.PeriodicLaunch `json:",omitempty"`
}

// NodePoolUpsertCommand creates or updates node pools.
type NodePoolUpsertCommand struct {
	NodePools []*structs.NodePool
}

// NodePoolDeleteCommand deletes node pools; the FSM refuses it (and
// deletes none) when one of them holds a node or a live job.
type NodePoolDeleteCommand struct {
	Names []string
}

// NamespaceUpsertCommand creates or updates namespaces.
type NamespaceUpsertCommand struct {
	Namespaces []*structs.Namespace
}

// NamespaceDeleteCommand deletes namespaces; the FSM refuses it (and
// deletes none) when one does not exist or holds a job that is not dead.
type NamespaceDeleteCommand struct {
	Names []string
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
	// Jobs are the jobs the allocations were sent without, each once per
	// entry rather than once per allocation (normalizePlanResult); the
	// FSM puts them back before it applies. AllocJobs, parallel to Allocs
	// when Jobs is set, says whose: 0 for an allocation that carries its
	// own Job (or none), i+1 for Jobs[i].
	Jobs      []*structs.Job
	AllocJobs []int
}

// SchedulerConfigCommand sets the scheduler configuration; with CAS only
// if its ModifyIndex is the stored one's.
type SchedulerConfigCommand struct {
	Config structs.SchedulerConfiguration
	CAS    bool
}

// ClusterMetaCommand stores the cluster's identity; the first one
// committed wins.
type ClusterMetaCommand struct {
	Meta structs.ClusterMetadata
}

// AutopilotConfigCommand sets the autopilot configuration; with CAS only
// if its ModifyIndex is the stored one's.
type AutopilotConfigCommand struct {
	Config structs.AutopilotConfig
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

// NodeDeregisterCommand removes a node (node purge); LostAllocs are
// client-style updates marking its allocations that still ran lost, and
// Evals the evaluations of the jobs it affected (both absent from entries
// written before purges existed).
type NodeDeregisterCommand struct {
	NodeID     string
	LostAllocs []*structs.Allocation
	Evals      []*structs.Evaluation
}

// AllocClientUpdateCommand applies client-reported allocation state.
type AllocClientUpdateCommand struct {
	Allocs []*structs.Allocation
	Evals  []*structs.Evaluation
}

// Decoding depths. Raft entries and snapshots are read with a handle that
// allows more nesting than any proposal was checked with: a value sits
// deeper in a snapshot (inside its table's list) or a plan result (inside
// an allocation) than in the command that first stored it, and it must
// still read back there.
const (
	// storedDecodeDepth bounds nesting when the FSM decodes an entry or a
	// snapshot, and when the RPC server decodes a request.
	storedDecodeDepth = 2048
	// proposalDepth bounds nesting in a command proposed to raft.
	proposalDepth = 1024
	// jobDepth bounds nesting in a submitted job, encoded as its
	// registration command: plan results carry the job two levels deeper.
	jobDepth = proposalDepth - 16
)

// WriteOnceCommand wraps the command of a deduplicated write (Type and
// Body: a raft entry's type byte and msgpack body) with the request ID it
// is applied once for. The FSM applies it only if no write with that ID
// was applied before, and records it in the same transaction
// (state.WriteRecord, with ReplyType, Reply and Time); either way it
// answers the record of the first write.
type WriteOnceCommand struct {
	RequestID string
	// Time is the leader's clock (Unix nanoseconds): the record's age
	// counts from it.
	Time      int64
	ReplyType string
	Reply     []byte
	Type      MessageType
	Body      []byte
}

// newMsgpackHandle returns the codec handle of raft entries and snapshots.
func newMsgpackHandle() *codec.MsgpackHandle {
	return newMsgpackHandleDepth(storedDecodeDepth)
}

// newMsgpackHandleDepth returns the codec handle of raft entries whose
// decoder stops at maxDepth levels of nesting.
func newMsgpackHandleDepth(maxDepth int16) *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.MaxDepth = maxDepth
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
	// The entry lives as long as the raft log keeps it (the whole log,
	// in memory, for a -dev agent): keep its bytes, not the buffer's
	// growth room, which was up to half of it.
	return bytes.Clone(buf.Bytes()), nil
}

// decodeBody decodes a command's msgpack body into out.
func decodeBody(h *codec.MsgpackHandle, body []byte, out any) error {
	return codec.NewDecoderBytes(body, h).Decode(out)
}

// storable encodes req (a pointer to a command) as a raft entry of type t
// and proves that it decodes back with check, a handle stricter than the
// FSM's. An entry that fails is refused with KindInvalid: once committed,
// a command that does not decode would fail on every replay.
func storable(h, check *codec.MsgpackHandle, t MessageType, req any) ([]byte, error) {
	buf, err := encodeCommand(h, t, req)
	if err != nil {
		return nil, structs.Invalid("cannot store the %s request: %v", t, err)
	}
	back := reflect.New(reflect.TypeOf(req).Elem()).Interface()
	if err := decodeBody(check, buf[1:], back); err != nil {
		return nil, structs.Invalid("cannot store the %s request: it does not decode back (%v): "+
			"a value in it (a task's config?) is nested more than %d levels deep or malformed", t, err, check.MaxDepth)
	}
	return buf, nil
}
