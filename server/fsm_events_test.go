package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/drover-io/drover/server/events"
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
		"5 Node NodeStatusUpdate n1",
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
