package scheduler

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// checksCtx is a context that reports itself done after its Err has been
// asked n times: a deterministic stand-in for a deadline that passes
// while the scheduler computes.
type checksCtx struct {
	context.Context
	left atomic.Int64
}

func (c *checksCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func (c *checksCtx) Value(key any) any { return c.Context.Value(key) }

func (c *checksCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// TestProcessInterrupted: a job that would take forever to place (a count
// near int64 max, as issue 19's) stops at the next placement once its
// context is done, and no plan comes back.
func TestProcessInterrupted(t *testing.T) {
	for _, typ := range []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem} {
		t.Run(typ, func(t *testing.T) {
			st := newFakeState()
			for _, id := range []string{"a", "b", "c"} {
				st.nodes = append(st.nodes, newNode(id))
			}
			job := newJob("huge", typ, int(^uint(0)>>1), 10, 10)
			st.jobs[job.NamespacedID()] = job
			ctx := &checksCtx{Context: context.Background()}
			ctx.left.Store(2)
			opts := testOptions()
			opts.Context = ctx
			// A system job places one per node: three placements, and
			// the third check reports the context done.
			plan, err := opts.Process(st, evalFor(job))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want it to wrap the context's cause", err)
			}
			if plan != nil {
				t.Fatal("an interrupted Process returned a plan")
			}
		})
	}
}

// TestProcessCause: the error carries the context's cause, so that a
// worker can say why it gave up.
func TestProcessCause(t *testing.T) {
	st := newFakeState()
	st.nodes = append(st.nodes, newNode("a"))
	job := newJob("web", structs.JobTypeService, 3, 10, 10)
	st.jobs[job.NamespacedID()] = job
	cause := errors.New("evaluation deadline passed")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	opts := testOptions()
	opts.Context = ctx
	if _, err := opts.Process(st, evalFor(job)); !errors.Is(err, cause) {
		t.Fatalf("err = %v, want %v", err, cause)
	}
	opts.Context = context.Background()
	if plan, err := opts.Process(st, evalFor(job)); err != nil || len(plan.NodeAllocation["a"]) != 3 {
		t.Fatalf("uninterrupted: %v", err)
	}
}
