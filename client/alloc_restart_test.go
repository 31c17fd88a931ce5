package client

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

// Naming a task and asking for all tasks is refused before any lookup.
func TestRestartAllocTaskAndAllTasks(t *testing.T) {
	err := (&Client{}).RestartAlloc(context.Background(), "some-alloc", "web", true)
	if structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("RestartAlloc(task, allTasks) = %v, want invalid", err)
	}
}
