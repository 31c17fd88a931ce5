package agent

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
	"time"
)

func TestAutoMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name              string
		heapLive, nonHeap uint64
		want              int64
	}{
		{"idle agent: the floor", 15 * mib, 10 * mib, autoMemoryFloor},
		{"1,000 tasks: the floor", 50 * mib, 30 * mib, autoMemoryFloor},
		{"bigger: a quarter of the live heap above it", 100 * mib, 40 * mib, 165 * mib},
		{"at the ceiling", 256 * mib, 40 * mib, 360 * mib},
		{"above the ceiling: no limit", 300 * mib, 40 * mib, math.MaxInt64},
	} {
		if got := autoMemoryLimit(tc.heapLive, tc.nonHeap); got != tc.want {
			t.Errorf("%s: autoMemoryLimit(%d MiB, %d MiB) = %d MiB, want %d MiB", tc.name,
				tc.heapLive/mib, tc.nonHeap/mib, got/mib, tc.want/mib)
		}
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"", 0, false},
		{"auto", 0, false},
		{"OFF", 0, false},
		{"128MiB", 128 << 20, false},
		{"200MB", 200_000_000, false},
		{"1GiB", 1 << 30, false},
		{"10MiB", 0, true},
		{"lots", 0, true},
		{"-5MB", 0, true},
	} {
		got, err := parseMemoryLimit(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestMemoryLimiter: a size is set as it is, auto sets the floor and
// adapts on each tick, off and GOMEMLIMIT leave the runtime alone, and
// Stop restores the limit found. Not parallel: the limit is the
// process's.
func TestMemoryLimiter(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)

	t.Setenv("GOMEMLIMIT", "")
	m := startMemoryLimiter("200MiB", logger)
	if got := debug.SetMemoryLimit(-1); got != 200<<20 {
		t.Errorf("limit = %d, want 200 MiB", got)
	}
	m.Stop()
	if got := debug.SetMemoryLimit(-1); got != orig {
		t.Errorf("after Stop: %d, want %d", got, orig)
	}

	if m := startMemoryLimiter("off", logger); m != nil || debug.SetMemoryLimit(-1) != orig {
		t.Error("off set a limit")
	}

	m = startMemoryLimiter("auto", logger)
	if got := debug.SetMemoryLimit(-1); got != autoMemoryFloor {
		t.Errorf("auto starts at %d, want the floor", got)
	}
	m.Stop()

	// One tick of auto's loop sets what autoMemoryLimit says for this
	// (small) test process: the floor.
	ctx, cancel := context.WithCancel(context.Background())
	tick := make(chan time.Time)
	done := make(chan struct{})
	debug.SetMemoryLimit(1 << 40)
	go func() { defer close(done); (&memoryLimiter{}).adapt(ctx, tick) }()
	tick <- time.Now()
	tick <- time.Now() // the first tick's limit is set once the second is taken
	cancel()
	<-done
	if got := debug.SetMemoryLimit(-1); got != autoMemoryFloor {
		t.Errorf("after a tick: %d, want the floor %d", got, autoMemoryFloor)
	}
	debug.SetMemoryLimit(orig)

	t.Setenv("GOMEMLIMIT", "300MiB")
	if m := startMemoryLimiter("200MiB", logger); m != nil || debug.SetMemoryLimit(-1) != orig {
		t.Error("GOMEMLIMIT in the environment did not win")
	}
}
