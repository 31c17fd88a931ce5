package server

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

func typedEval(id, job, typ string, priority int) *structs.Evaluation {
	e := ev(id, job)
	e.Type, e.Priority = typ, priority
	return e
}

// TestEvalBrokerDequeuesByType: a worker that runs some schedulers gets
// the best evaluation of those types, not the queue's top.
func TestEvalBrokerDequeuesByType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newEvalBroker(nil)
		b.SetEnabled(true)
		b.Enqueue(typedEval("s1", "web", structs.JobTypeService, 80))
		b.Enqueue(typedEval("b1", "report", structs.JobTypeBatch, 30))
		b.Enqueue(typedEval("b2", "backup", structs.JobTypeBatch, 60))
		ctx := context.Background()
		for _, want := range []struct {
			types []string
			id    string
		}{{[]string{"batch", "_core"}, "b2"}, {nil, "s1"}, {[]string{"batch"}, "b1"}} {
			e, _, err := b.DequeueToken(ctx, want.types)
			if err != nil || e.ID != want.id {
				t.Fatalf("dequeue %v = %v, %v; want %s", want.types, e, err, want.id)
			}
		}
	})
}

// TestEvalBrokerWakesEveryWaitingWorker: an evaluation enqueued wakes the
// worker that runs its type even when another worker, of other types, is
// waiting too (one wake-up token would go to either).
func TestEvalBrokerWakesEveryWaitingWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newEvalBroker(nil)
		b.SetEnabled(true)
		got := make(chan string, 2)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for _, typ := range []string{structs.JobTypeBatch, structs.JobTypeService} {
			go func() {
				if e, _, err := b.DequeueToken(ctx, []string{typ}); err == nil {
					got <- e.ID
				}
			}()
		}
		synctest.Wait() // both wait
		b.Enqueue(typedEval("s1", "web", structs.JobTypeService, 50))
		synctest.Wait()
		select {
		case id := <-got:
			if id != "s1" {
				t.Fatalf("dequeued %s", id)
			}
		default:
			t.Fatal("the service worker was not woken by a service evaluation")
		}
		b.Enqueue(typedEval("b1", "report", structs.JobTypeBatch, 50))
		synctest.Wait()
		if len(got) != 1 || <-got != "b1" {
			t.Fatal("the batch worker was not woken by a batch evaluation")
		}
	})
}

// TestSchedulerWorkerConfig: the server's workers are resized and re-aimed
// at run time; a bad configuration changes nothing.
func TestSchedulerWorkerConfig(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = 2 })
	cfg := s.SchedulerWorkerConfig()
	if cfg.NumSchedulers != 2 || !slices.Equal(cfg.EnabledSchedulers, workerSchedulers) {
		t.Fatalf("initial config %+v", cfg)
	}
	got, err := s.SetSchedulerWorkerConfig(structs.SchedulerWorkerConfig{NumSchedulers: 1, EnabledSchedulers: []string{"_core", "batch", "batch"}})
	if err != nil || got.NumSchedulers != 1 || !slices.Equal(got.EnabledSchedulers, []string{"_core", "batch"}) {
		t.Fatalf("set = %+v, %v", got, err)
	}
	info := s.SchedulerWorkers()
	if len(info.Schedulers) != 1 || !slices.Equal(info.Schedulers[0].EnabledSchedulers, []string{"_core", "batch"}) ||
		info.Schedulers[0].ID != s.config.NodeName+"/2" {
		t.Fatalf("workers after the change: %+v", info.Schedulers)
	}
	for _, bad := range []structs.SchedulerWorkerConfig{
		{NumSchedulers: -1, EnabledSchedulers: []string{"_core"}},
		{NumSchedulers: 1, EnabledSchedulers: []string{"service"}},
		{NumSchedulers: 1, EnabledSchedulers: []string{"_core", "cron"}},
		{NumSchedulers: 100000, EnabledSchedulers: []string{"_core"}},
	} {
		if _, err := s.SetSchedulerWorkerConfig(bad); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("set %+v: %v, want invalid", bad, err)
		}
	}
	if now := s.SchedulerWorkerConfig(); now.NumSchedulers != 1 {
		t.Fatalf("a refused config changed the workers: %+v", now)
	}
	if _, err := s.SetSchedulerWorkerConfig(structs.SchedulerWorkerConfig{NumSchedulers: 0, EnabledSchedulers: []string{"_core", "system"}}); err != nil {
		t.Fatal(err)
	}
	if n := len(s.SchedulerWorkers().Schedulers); n != 0 {
		t.Fatalf("%d workers after setting none", n)
	}
}
