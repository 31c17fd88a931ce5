package timeline

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// fakeClock returns t and advances it by a millisecond per call.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func at(ms int64) int64 { return time.Unix(1000, ms*int64(time.Millisecond)).UnixNano() }

func TestMarkKeepsTheFirstTime(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	r := New(0, clock.now)
	r.Mark("a", structs.StepAllocReceived) // 1ms
	r.Mark("a", structs.StepTaskRunning)   // 2ms
	r.Mark("a", structs.StepAllocReceived) // 3ms: ignored
	r.Mark("b", structs.StepAllocReceived) // 4ms
	r.MarkAt("a", structs.StepRunnerStarted, time.Unix(1000, 0).Add(10*time.Millisecond))
	r.MarkAt("a", structs.StepHooksDone, time.Time{}) // zero time: ignored
	r.Mark("a", 0)                                    // unknown steps: ignored
	r.Mark("a", structs.NumTimelineSteps)
	r.Mark("", structs.StepAllocReceived)

	want := []structs.TimelineEntry{
		{Step: structs.StepAllocReceived, Time: at(1)},
		{Step: structs.StepRunnerStarted, Time: at(10)},
		{Step: structs.StepTaskRunning, Time: at(2)},
	}
	if got := r.Entries("a"); !reflect.DeepEqual(got, want) {
		t.Errorf("Entries(a) = %v, want %v", got, want)
	}
	if got := r.Entries("b"); !reflect.DeepEqual(got, []structs.TimelineEntry{{Step: structs.StepAllocReceived, Time: at(4)}}) {
		t.Errorf("Entries(b) = %v", got)
	}
	if got := r.Entries("unknown"); got != nil {
		t.Errorf("Entries(unknown) = %v, want nil", got)
	}
	if got := r.Entries(""); got != nil {
		t.Errorf("Entries(\"\") = %v, want nil", got)
	}
}

func TestRecorderForgetsTheOldestIDs(t *testing.T) {
	r := New(3, nil)
	for i := range 5 {
		r.Mark(fmt.Sprint(i), structs.StepEvalEnqueued)
	}
	// A step of a remembered ID does not make it younger.
	r.Mark("2", structs.StepEvalDequeued)
	r.Mark("5", structs.StepEvalEnqueued)
	for id, want := range map[string]int{"0": 0, "1": 0, "2": 0, "3": 1, "4": 1, "5": 1} {
		if got := len(r.Entries(id)); got != want {
			t.Errorf("id %s: %d entries, want %d", id, got, want)
		}
	}
	if len(r.byID) != 3 || len(r.ring) != 3 {
		t.Errorf("holds %d IDs in a ring of %d, want 3", len(r.byID), len(r.ring))
	}
}

func TestNilRecorderRecordsNothing(t *testing.T) {
	var r *Recorder
	r.Mark("a", structs.StepAllocReceived)
	r.MarkAt("a", structs.StepAllocReceived, time.Now())
	if got := r.Entries("a"); got != nil {
		t.Errorf("Entries = %v, want nil", got)
	}
}

func TestMerge(t *testing.T) {
	cases := []struct {
		name  string
		parts [][]structs.TimelineEntry
		want  []structs.TimelineEntry
	}{
		{name: "none", want: nil},
		{
			name: "parts interleave in step order",
			parts: [][]structs.TimelineEntry{
				{{Step: structs.StepJobRegistered, Time: 1}, {Step: structs.StepRunningApplied, Time: 9}},
				{{Step: structs.StepTaskRunning, Time: 5}, {Step: structs.StepAllocReceived, Time: 3}},
			},
			want: []structs.TimelineEntry{
				{Step: structs.StepJobRegistered, Time: 1}, {Step: structs.StepAllocReceived, Time: 3},
				{Step: structs.StepTaskRunning, Time: 5}, {Step: structs.StepRunningApplied, Time: 9},
			},
		},
		{
			name: "the earlier of two times of one step",
			parts: [][]structs.TimelineEntry{
				{{Step: structs.StepPlanApplied, Time: 7}},
				{{Step: structs.StepPlanApplied, Time: 4}},
				{{Step: structs.StepPlanApplied, Time: 6}},
			},
			want: []structs.TimelineEntry{{Step: structs.StepPlanApplied, Time: 4}},
		},
		{
			name:  "unknown steps and zero times are dropped",
			parts: [][]structs.TimelineEntry{{{Step: 0, Time: 1}, {Step: structs.NumTimelineSteps, Time: 2}, {Step: structs.StepHooksDone}}},
			want:  nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Merge(tc.parts...); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Merge = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStepNames(t *testing.T) {
	seen := map[string]bool{}
	for s := structs.TimelineStep(1); s < structs.NumTimelineSteps; s++ {
		name := s.String()
		if name == "unknown" || seen[name] {
			t.Errorf("step %d is named %q", s, name)
		}
		seen[name] = true
	}
}

// TestConcurrentMarks runs under -race: marks from many goroutines.
func TestConcurrentMarks(t *testing.T) {
	r := New(64, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				id := fmt.Sprint(i % 100)
				r.Mark(id, structs.TimelineStep(1+(g+i)%int(structs.NumTimelineSteps-1)))
				_ = r.Entries(id)
			}
		})
	}
	wg.Wait()
	if len(r.byID) != 64 {
		t.Errorf("holds %d IDs, want 64", len(r.byID))
	}
}

// BenchmarkMark is the cost of marking a step of a known ID.
//
//	go test -run '^$' -bench Mark ./timeline/
func BenchmarkMark(b *testing.B) {
	r := New(0, nil)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = structs.GenerateUUID()
	}
	b.ResetTimer()
	for i := range b.N {
		r.Mark(ids[i%len(ids)], structs.StepTaskRunning)
	}
}
