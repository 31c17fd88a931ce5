package events

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

func jobBatch(index uint64, job string) structs.StreamEvents {
	return structs.StreamEvents{Index: index, Events: []structs.StreamEvent{
		{Topic: structs.TopicJob, Type: "JobRegistered", Key: job, Namespace: "default", Index: index},
		{Topic: structs.TopicAllocation, Type: "PlanResult", Key: "a-" + job, Namespace: "default", FilterKeys: []string{job}, Index: index},
	}}
}

func nextNow(t *testing.T, s *Subscription) (structs.StreamEvents, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // only what is buffered
	return s.Next(ctx)
}

// TestSubscribeFilters: topics, keys (and filter keys), namespaces.
func TestSubscribeFilters(t *testing.T) {
	tests := []struct {
		name      string
		topics    map[string][]string
		namespace string
		want      []string // "index topic key"
	}{
		{"everything", map[string][]string{"*": {"*"}}, "*",
			[]string{"1 Job web", "1 Allocation a-web", "2 Job db", "2 Allocation a-db", "3 Job ops", "3 Allocation a-ops"}},
		{"one job's events by key and filter key", map[string][]string{"Job": {"web"}, "Allocation": {"web"}}, "",
			[]string{"1 Job web", "1 Allocation a-web"}},
		{"a topic without key", map[string][]string{"Allocation": nil}, "default",
			[]string{"1 Allocation a-web", "2 Allocation a-db"}},
		{"another namespace", map[string][]string{"Job": {"*"}}, "ops", []string{"3 Job ops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBroker(8)
			s := b.Subscribe(0, tt.topics, tt.namespace)
			b.Publish(jobBatch(1, "web"))
			b.Publish(jobBatch(2, "db"))
			ops := jobBatch(3, "ops")
			for i := range ops.Events {
				ops.Events[i].Namespace = "ops"
			}
			b.Publish(ops)
			var got []string
			for {
				batch, err := nextNow(t, s)
				if err != nil {
					break
				}
				for _, e := range batch.Events {
					got = append(got, formatEvent(e))
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func formatEvent(e structs.StreamEvent) string {
	return string(rune('0'+e.Index)) + " " + e.Topic + " " + e.Key
}

// TestSubscribeResume: index= starts at the first buffered batch at or
// after it; 0, or an index older than the buffer, starts at its oldest
// batch (Nomad replays its buffer from index 0); an index past the buffer
// waits for the next batch published.
func TestSubscribeResume(t *testing.T) {
	b := NewBroker(3)
	for i := uint64(1); i <= 5; i++ {
		b.Publish(jobBatch(i*10, "web"))
	}
	all := map[string][]string{"Job": {"*"}}
	tests := []struct {
		index uint64
		want  uint64
	}{{30, 30}, {25, 30}, {1, 30}, {0, 30}, {50, 50}}
	for _, tt := range tests {
		got, err := nextNow(t, b.Subscribe(tt.index, all, "*"))
		if err != nil || got.Index != tt.want {
			t.Errorf("index=%d: first batch %d (%v), want %d", tt.index, got.Index, err, tt.want)
		}
	}
	if _, err := nextNow(t, b.Subscribe(60, all, "*")); !errors.Is(err, context.Canceled) {
		t.Errorf("index=60 read a buffered batch (%v)", err)
	}
}

// TestSlowSubscriberDropped: publishing never waits for a subscriber; one
// that fell more than the buffer behind gets ErrLagged.
func TestSlowSubscriberDropped(t *testing.T) {
	b := NewBroker(4)
	slow := b.Subscribe(0, map[string][]string{"*": nil}, "*")
	for i := uint64(1); i <= 100; i++ {
		b.Publish(jobBatch(i, "web")) // would deadlock here if it waited
	}
	if _, err := nextNow(t, slow); !errors.Is(err, ErrLagged) {
		t.Fatalf("slow subscriber: %v, want ErrLagged", err)
	}
	// One that kept up reads on.
	fast := b.Subscribe(97, map[string][]string{"*": nil}, "*")
	if got, err := nextNow(t, fast); err != nil || got.Index != 97 {
		t.Errorf("fast subscriber: %d, %v", got.Index, err)
	}
}

// TestNextWaitsForPublish: Next blocks until a batch is published, and
// returns ctx's error when ctx ends first.
func TestNextWaitsForPublish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBroker(4)
		s := b.Subscribe(0, map[string][]string{"Job": {"web"}}, "")
		got := make(chan structs.StreamEvents, 1)
		go func() {
			batch, err := s.Next(t.Context())
			if err != nil {
				t.Error(err)
			}
			got <- batch
		}()
		synctest.Wait()
		b.Publish(jobBatch(1, "db")) // not the subscription's
		synctest.Wait()
		select {
		case batch := <-got:
			t.Fatalf("Next returned %+v for another job", batch)
		default:
		}
		b.Publish(jobBatch(2, "web"))
		if batch := <-got; batch.Index != 2 || len(batch.Events) != 1 {
			t.Errorf("Next = %+v", batch)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Next after the timeout: %v", err)
		}
	})
}
