package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// BenchmarkEventDelivery: from the start of a raft apply (an evaluation
// update on an in-memory single server) to its event in a subscriber's
// hands.
func BenchmarkEventDelivery(b *testing.B) {
	s, err := NewServer(context.Background(), &Config{NodeName: "bench", NumWorkers: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := s.Shutdown(); err != nil {
			b.Error(err)
		}
	}()
	// From the next apply on: index 0 would replay the buffered startup.
	sub := s.Events().Subscribe(s.raft.LastIndex()+1, map[string][]string{structs.TopicEvaluation: nil}, "*")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		ev := &structs.Evaluation{ID: fmt.Sprintf("e-%d", i), Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete}
		if _, _, err := s.raftApply(EvalUpdateRequestType, &EvalUpdateCommand{Evals: []*structs.Evaluation{ev}}); err != nil {
			b.Fatal(err)
		}
		batch, err := sub.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if batch.Events[0].Key != ev.ID {
			b.Fatalf("event for %s, want %s", batch.Events[0].Key, ev.ID)
		}
	}
}
