package client

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

func TestStartGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newStartGate(2)
		var leaves []func()
		for range 2 {
			leave, err := g.Enter(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			leaves = append(leaves, leave)
		}
		// A third start waits for a turn...
		third := make(chan error, 1)
		go func() {
			leave, err := g.Enter(context.Background())
			if err == nil {
				defer leave()
			}
			third <- err
		}()
		synctest.Wait()
		select {
		case err := <-third:
			t.Fatalf("a third start entered a gate of two turns (%v)", err)
		default:
		}
		// ...until one ends.
		leaves[0]()
		synctest.Wait()
		if err := <-third; err != nil {
			t.Fatal(err)
		}
		// Full again (leaves[1] and hold): a start whose context ends while
		// it waits gets the context's error.
		hold, err := g.Enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := g.Enter(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Enter on a full gate with a done context = %v, want context.Canceled", err)
		}
		hold()
		leaves[1]()
	})
}

func TestStartGateDefault(t *testing.T) {
	if n := cap(newStartGate(0)); n != DefaultMaxParallelStarts() || n < 16 {
		t.Errorf("default gate of %d turns, want DefaultMaxParallelStarts() = %d (at least 16)", n, DefaultMaxParallelStarts())
	}
}
