package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/events"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// TestFSMEvents: every apply of the FSM scenario publishes its changes,
// in raft order, typed as Nomad types them, with the changed objects.
func TestFSMEvents(t *testing.T) {
	f, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.events = events.NewBroker(64)
	sub := f.events.Subscribe(0, map[string][]string{structs.TopicAll: nil}, "*")
	fsmScenario(t, f)

	var got []string
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // read only what was published
	for {
		b, err := sub.Next(ctx)
		if err != nil {
			break
		}
		for _, e := range b.Events {
			if e.Index != b.Index {
				t.Errorf("event at %d in batch %d", e.Index, b.Index)
			}
			if len(e.Payload) != 1 || e.Payload[e.Topic] == nil {
				t.Errorf("%s event payload %v lacks its %s", e.Type, e.Payload, e.Topic)
			}
			got = append(got, fmt.Sprintf("%d %s %s %s", e.Index, e.Topic, e.Type, e.Key))
		}
	}
	want := []string{
		"1 Node NodeRegistration n1",
		"2 Job JobRegistered web",
		"2 Evaluation EvaluationUpdated e1",
		"3 Allocation PlanResult a1",
		"3 Evaluation PlanResult e1",
		"4 Allocation AllocationUpdated a1",
		"5 Node NodeStreamEvent n1",
		"6 Evaluation EvaluationUpdated e2",
		"7 Node NodeRegistration n2",
		"8 Node NodeDeregistration n2",
		"9 Job JobRegistered gone",
		"9 Evaluation EvaluationUpdated e3",
		"10 Job JobDeregistered gone",
		"10 Evaluation EvaluationUpdated e4",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEventBatchServicesAndDrain: service registrations become Service
// events, and a node write that changes drain or eligibility adds a
// NodeDrain event after its Node event; one that changes neither adds
// none.
func TestEventBatchServicesAndDrain(t *testing.T) {
	reg := &structs.ServiceRegistration{ID: "_nomad-task-a1-web-http", ServiceName: "web", Namespace: "default",
		JobID: "shop", AllocID: "a1", NodeID: "n1", Address: "10.0.0.1", Port: 8080}
	ready := &structs.Node{ID: "n1", SecretID: "s3cret", Status: structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible}
	draining := ready.Copy()
	draining.Drain = true
	draining.SchedulingEligibility = structs.NodeSchedulingIneligible
	draining.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour},
		StartedAt: time.Unix(100, 0), ForceDeadline: time.Unix(3700, 0)}
	sooner := draining.Copy()
	sooner.DrainStrategy.Deadline = time.Minute
	sooner.DrainStrategy.ForceDeadline = time.Unix(160, 0)
	ineligible := ready.Copy()
	ineligible.SchedulingEligibility = structs.NodeSchedulingIneligible
	down := ready.Copy()
	down.Status = structs.NodeStatusDown

	tests := []struct {
		name    string
		t       MessageType
		changes []state.Change
		want    []string // topic type key namespace filterkeys
	}{
		{"service registered", ServiceUpsertRequestType,
			[]state.Change{{Table: state.TableServices, After: reg}},
			[]string{"Service ServiceRegistration _nomad-task-a1-web-http default [shop web]"}},
		{"service deregistered", ServiceDeleteRequestType,
			[]state.Change{{Table: state.TableServices, Before: reg}},
			[]string{"Service ServiceDeregistration _nomad-task-a1-web-http default [shop web]"}},
		{"service removed with its allocation", AllocClientUpdateRequestType,
			[]state.Change{{Table: state.TableServices, Before: reg}},
			[]string{"Service ServiceDeregistration _nomad-task-a1-web-http default [shop web]"}},
		// Node-topic types are Nomad's: NodeDrain for every drain or
		// eligibility apply, NodeStreamEvent for a status change.
		{"drain starts", NodeUpdateDrainRequestType,
			[]state.Change{{Table: state.TableNodes, Before: ready, After: draining}},
			[]string{"Node NodeDrain n1  []", "NodeDrain NodeDrain n1  []"}},
		{"drain ends", NodeUpdateDrainRequestType,
			[]state.Change{{Table: state.TableNodes, Before: draining, After: ready}},
			[]string{"Node NodeDrain n1  []", "NodeDrain NodeDrain n1  []"}},
		{"drain deadline changes", NodeUpdateDrainRequestType,
			[]state.Change{{Table: state.TableNodes, Before: draining, After: sooner}},
			[]string{"Node NodeDrain n1  []", "NodeDrain NodeDrain n1  []"}},
		{"same drain written again", NodeUpdateDrainRequestType,
			[]state.Change{{Table: state.TableNodes, Before: draining, After: draining.Copy()}},
			[]string{"Node NodeDrain n1  []"}},
		{"eligibility changes", NodeUpdateDrainRequestType,
			[]state.Change{{Table: state.TableNodes, Before: ready, After: ineligible}},
			[]string{"Node NodeDrain n1  []", "NodeDrain NodeDrain n1  []"}},
		{"re-registration that changes eligibility", NodeRegisterRequestType,
			[]state.Change{{Table: state.TableNodes, Before: ready, After: ineligible}},
			[]string{"Node NodeRegistration n1  []", "NodeDrain NodeDrain n1  []"}},
		{"status only", NodeUpdateStatusRequestType,
			[]state.Change{{Table: state.TableNodes, Before: ready, After: down}},
			[]string{"Node NodeStreamEvent n1  []"}},
		{"node registered", NodeRegisterRequestType,
			[]state.Change{{Table: state.TableNodes, After: draining}},
			[]string{"Node NodeRegistration n1  []"}},
		{"node removed", NodeDeregisterRequestType,
			[]state.Change{{Table: state.TableNodes, Before: draining}},
			[]string{"Node NodeDeregistration n1  []"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := eventBatch(tt.t, 7, tt.changes)
			var got []string
			for _, e := range b.Events {
				if e.Index != 7 {
					t.Errorf("%s event at index %d, want 7", e.Type, e.Index)
				}
				got = append(got, fmt.Sprintf("%s %s %s %s %v", e.Topic, e.Type, e.Key, e.Namespace, e.FilterKeys))
				switch e.Topic {
				case structs.TopicService:
					if e.Payload["Service"] != reg {
						t.Errorf("Service payload %v, want the registration", e.Payload)
					}
				case structs.TopicNodeDrain, structs.TopicNode:
					want := tt.changes[0].After
					if want == nil {
						want = tt.changes[0].Before // deleted
					}
					if sn, ok := e.Payload["Node"].(streamNode); !ok || sn.Node != want {
						t.Errorf("%s payload %v, want the node as written", e.Topic, e.Payload)
					}
					js, err := json.Marshal(e.Payload)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(string(js), "s3cret") || !strings.Contains(string(js), `"SecretID":""`) {
						t.Errorf("%s payload carries the node's secret, or no empty SecretID as Nomad's: %s", e.Topic, js)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestFSMServiceAndDrainEvents: through raft applies, a subscription to
// the Service and NodeDrain topics sees a service registered for a running
// allocation, its node's drain starting, and the registration deleted with
// its allocation, and nothing of the other topics.
func TestFSMServiceAndDrainEvents(t *testing.T) {
	f, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.events = events.NewBroker(64)
	sub := f.events.Subscribe(0, map[string][]string{structs.TopicService: nil, structs.TopicNodeDrain: nil}, "*")
	fsmScenario(t, f) // a1 runs on n1 from index 4
	reg := &structs.ServiceRegistration{ID: "_nomad-task-a1-web-http", ServiceName: "web-http", Namespace: "default",
		NodeID: "n1", Datacenter: "dc1", JobID: "web", AllocID: "a1", Address: "127.0.0.1", Port: 8080}
	applyCounted(t, f, 13, ServiceUpsertRequestType, &ServiceUpsertCommand{Services: []*structs.ServiceRegistration{reg}})
	applyCmd(t, f, 14, NodeUpdateDrainRequestType, &NodeDrainCommand{Update: state.NodeDrainUpdate{NodeID: "n1",
		SetDrain: true, DrainStrategy: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}},
		Eligibility: structs.NodeSchedulingIneligible}})
	applyCounted(t, f, 15, ServiceDeleteRequestType, &ServiceDeleteCommand{AllocIDs: []string{"a1"}})

	var got []string
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // read only what was published
	for {
		b, err := sub.Next(ctx)
		if err != nil {
			break
		}
		for _, e := range b.Events {
			got = append(got, fmt.Sprintf("%d %s %s %s", e.Index, e.Topic, e.Type, e.Key))
		}
	}
	want := []string{
		"13 Service ServiceRegistration _nomad-task-a1-web-http",
		"14 NodeDrain NodeDrain n1",
		"15 Service ServiceDeregistration _nomad-task-a1-web-http",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// applyCounted applies a command whose answer is how many objects it
// wrote, and wants one.
func applyCounted(t *testing.T, f *FSM, index uint64, mt MessageType, cmd any) {
	t.Helper()
	buf, err := encodeCommand(f.handle, mt, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if resp := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: buf}); resp != 1 {
		t.Fatalf("apply %s at %d: %v, want 1 written", mt, index, resp)
	}
}

// TestEventBatchesPlanEvalsOnePerLine: a plan result's evaluations (the
// one planned, completed, and the blocked one it leaves) are each a line
// of their own after the line of its allocations and deployments, as
// Nomad's separate applies show them (Nomad's TestEvent_Stream wants one
// Evaluation event per line); every other apply stays one line, its
// evaluations together, as Nomad's.
func TestEventBatchesPlanEvalsOnePerLine(t *testing.T) {
	alloc := &structs.Allocation{ID: "a1", Namespace: "default", JobID: "web"}
	dep := &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web"}
	done := &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete}
	blocked := &structs.Evaluation{ID: "e2", Namespace: "default", JobID: "web", Status: structs.EvalStatusBlocked}
	changes := []state.Change{
		{Table: state.TableAllocs, After: alloc},
		{Table: state.TableDeployment, After: dep},
		{Table: state.TableEvals, After: done},
		{Table: state.TableEvals, After: blocked},
	}
	tests := []struct {
		name    string
		t       MessageType
		changes []state.Change
		want    []string // one per line: the keys of its events
	}{
		{"plan result", ApplyPlanResultsRequestType, changes, []string{"a1 d1", "e1", "e2"}},
		{"plan result of evaluations only", ApplyPlanResultsRequestType, changes[2:], []string{"e1", "e2"}},
		{"evaluations of another apply", EvalUpdateRequestType, changes[2:], []string{"e1 e2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, b := range eventBatches(tt.t, 9, tt.changes) {
				var keys []string
				for _, e := range b.Events {
					if e.Index != 9 || b.Index != 9 {
						t.Errorf("event %s at %d in a batch at %d, want 9", e.Key, e.Index, b.Index)
					}
					keys = append(keys, e.Key)
				}
				got = append(got, strings.Join(keys, " "))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("lines %q, want %q", got, tt.want)
			}
		})
	}

	// Through the broker, an Evaluation subscriber reads one event a line.
	br := events.NewBroker(16)
	sub := br.Subscribe(0, map[string][]string{structs.TopicEvaluation: nil}, "*")
	for _, b := range eventBatches(ApplyPlanResultsRequestType, 9, changes) {
		br.Publish(b)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // read only what was published
	var lines int
	for {
		b, err := sub.Next(ctx)
		if err != nil {
			break
		}
		lines++
		if len(b.Events) != 1 {
			t.Errorf("line at %d holds %d events, want 1", b.Index, len(b.Events))
		}
	}
	if lines != 2 {
		t.Errorf("read %d Evaluation lines, want 2", lines)
	}
}
