package server

import (
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// eventBatches turns what one raft apply of type t at index changed into
// the event stream's batches, each one line of the stream, all at index:
// one batch (eventBatch), except for a plan result, whose evaluations
// each get a batch of their own after the one of its allocations and
// deployments. Nomad commits a scheduler pass as several raft applies
// (the plan, each evaluation it creates, the evaluation's update), so its
// stream shows one evaluation per line; drover commits them in one apply
// and shows them as Nomad's lines (docs/decisions.md, "Event stream: a
// plan result's evaluations one per line").
func eventBatches(t MessageType, index uint64, changes []state.Change) []structs.StreamEvents {
	b := eventBatch(t, index, changes)
	if t != ApplyPlanResultsRequestType {
		return []structs.StreamEvents{b}
	}
	rest := structs.StreamEvents{Index: index}
	var evals []structs.StreamEvents
	for _, e := range b.Events {
		if e.Topic == structs.TopicEvaluation {
			evals = append(evals, structs.StreamEvents{Index: index, Events: []structs.StreamEvent{e}})
			continue
		}
		rest.Events = append(rest.Events, e)
	}
	if len(rest.Events) == 0 {
		return evals
	}
	return append([]structs.StreamEvents{rest}, evals...)
}

// eventBatch turns what one raft apply of type t at index changed into
// one batch: one event per job, allocation, evaluation,
// deployment, node or service registration written, in the order the
// apply wrote them, typed as Nomad types them; a node write that changes
// the node's drain or scheduling eligibility adds a NodeDrain event.
func eventBatch(t MessageType, index uint64, changes []state.Change) structs.StreamEvents {
	b := structs.StreamEvents{Index: index}
	for _, c := range changes {
		obj, deleted := c.After, false
		if obj == nil {
			obj, deleted = c.Before, true
		}
		if e, ok := event(t, c.Table, obj, deleted); ok {
			e.Index = index
			b.Events = append(b.Events, e)
		}
		if e, ok := drainEvent(c); ok {
			e.Index = index
			b.Events = append(b.Events, e)
		}
	}
	return b
}

// drainEvent is the NodeDrain event of a node write that changed the
// node's drain (started, ended, or given a new deadline) or eligibility
// (Nomad's NodeDrain topic). Registering a
// node, or removing one, changes neither.
func drainEvent(c state.Change) (structs.StreamEvent, bool) {
	if c.Table != state.TableNodes {
		return structs.StreamEvent{}, false
	}
	before, ok1 := c.Before.(*structs.Node)
	after, ok2 := c.After.(*structs.Node)
	if !ok1 || !ok2 || before == nil || after == nil ||
		(before.Drain == after.Drain && before.SchedulingEligibility == after.SchedulingEligibility &&
			sameDrain(before.DrainStrategy, after.DrainStrategy)) {
		return structs.StreamEvent{}, false
	}
	return structs.StreamEvent{Topic: structs.TopicNodeDrain, Type: "NodeDrain", Key: after.ID,
		Payload: map[string]any{"Node": streamNode{after, ""}}}, true
}

func event(t MessageType, table string, obj any, deleted bool) (structs.StreamEvent, bool) {
	plan := t == ApplyPlanResultsRequestType
	switch table {
	case state.TableJobs:
		j, ok := obj.(*structs.Job)
		// As Nomad's: job events are registrations and deregistrations,
		// not the status changes other applies make.
		if !ok || (t != JobRegisterRequestType && t != JobDeregisterRequestType) {
			return structs.StreamEvent{}, false
		}
		typ := "JobRegistered"
		if deleted || t == JobDeregisterRequestType {
			typ = "JobDeregistered"
		}
		return structs.StreamEvent{Topic: structs.TopicJob, Type: typ, Key: j.ID, Namespace: j.Namespace,
			Payload: map[string]any{"Job": j}}, true
	case state.TableAllocs:
		a, ok := obj.(*structs.Allocation)
		if !ok {
			return structs.StreamEvent{}, false
		}
		typ := "AllocationUpdated"
		if plan {
			typ = "PlanResult"
		}
		return structs.StreamEvent{Topic: structs.TopicAllocation, Type: typ, Key: a.ID, Namespace: a.Namespace,
			FilterKeys: nonEmpty(a.JobID, a.DeploymentID), Payload: map[string]any{"Allocation": a}}, true
	case state.TableEvals:
		e, ok := obj.(*structs.Evaluation)
		if !ok {
			return structs.StreamEvent{}, false
		}
		typ := "EvaluationUpdated"
		if plan {
			typ = "PlanResult"
		}
		return structs.StreamEvent{Topic: structs.TopicEvaluation, Type: typ, Key: e.ID, Namespace: e.Namespace,
			FilterKeys: nonEmpty(e.JobID), Payload: map[string]any{"Evaluation": e}}, true
	case state.TableDeployment:
		d, ok := obj.(*structs.Deployment)
		if !ok {
			return structs.StreamEvent{}, false
		}
		typ := "DeploymentStatusUpdate"
		if plan {
			typ = "PlanResult"
		}
		return structs.StreamEvent{Topic: structs.TopicDeployment, Type: typ, Key: d.ID, Namespace: d.Namespace,
			FilterKeys: nonEmpty(d.JobID), Payload: map[string]any{"Deployment": d}}, true
	case state.TableNodes:
		n, ok := obj.(*structs.Node)
		if !ok {
			return structs.StreamEvent{}, false
		}
		return structs.StreamEvent{Topic: structs.TopicNode, Type: nodeEventType(t, deleted), Key: n.ID,
			Payload: map[string]any{"Node": streamNode{n, ""}}}, true
	case state.TableServices:
		r, ok := obj.(*structs.ServiceRegistration)
		if !ok {
			return structs.StreamEvent{}, false
		}
		typ := "ServiceRegistration"
		if deleted {
			typ = "ServiceDeregistration"
		}
		return structs.StreamEvent{Topic: structs.TopicService, Type: typ, Key: r.ID, Namespace: r.Namespace,
			FilterKeys: nonEmpty(r.JobID, r.ServiceName), Payload: map[string]any{"Service": r}}, true
	}
	return structs.StreamEvent{}, false
}

// streamNode is a node as event payloads carry it: the node's SecretID
// never leaves the server (structs.Node does not encode it), and, as in
// Nomad's payloads, the field is there, empty (Nomad's clients check it).
type streamNode struct {
	*structs.Node
	SecretID string
}

// nodeEventType is the Type of a Node-topic event, as Nomad names them: a
// node's registration and removal; NodeDrain for every apply of a drain
// or eligibility change (an operator's drain, its end, the drainer
// marking it complete, node eligibility: Nomad types its eligibility
// applies NodeDrain too); NodeStreamEvent for the rest (status changes
// from heartbeats).
func nodeEventType(t MessageType, deleted bool) string {
	switch {
	case deleted:
		return "NodeDeregistration"
	case t == NodeRegisterRequestType:
		return "NodeRegistration"
	case t == NodeUpdateDrainRequestType:
		return "NodeDrain"
	default:
		return "NodeStreamEvent"
	}
}

// sameDrain is whether a and b are the same drain (or both none): an
// operator's new deadline for a drain in progress is a change.
func sameDrain(a, b *structs.DrainStrategy) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.DrainSpec == b.DrainSpec && a.ForceDeadline.Equal(b.ForceDeadline) && a.StartedAt.Equal(b.StartedAt)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
