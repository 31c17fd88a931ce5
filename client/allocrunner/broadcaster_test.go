package allocrunner

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestBroadcasterKeepsLatest(t *testing.T) {
	b := NewAllocBroadcaster()
	l := b.Listen()
	for i := uint64(1); i <= 100; i++ {
		b.Send(&structs.Allocation{ID: "a", ModifyIndex: i})
	}
	if got := <-l.Ch(); got.ModifyIndex != 100 {
		t.Errorf("got index %d, want the latest (100)", got.ModifyIndex)
	}
	select {
	case got := <-l.Ch():
		t.Errorf("stale version queued: %d", got.ModifyIndex)
	default:
	}
	late := b.Listen()
	if got := <-late.Ch(); got.ModifyIndex != 100 {
		t.Errorf("late listener got %d, want 100", got.ModifyIndex)
	}
	late.Close()
	b.Close()
	b.Close()
	late.Close()
	if _, ok := <-l.Ch(); ok {
		t.Errorf("listener channel open after Close")
	}
	b.Send(&structs.Allocation{ID: "a"}) // no panic after Close
	if _, ok := <-b.Listen().Ch(); ok {
		t.Errorf("listener of a closed broadcaster is open")
	}
}
