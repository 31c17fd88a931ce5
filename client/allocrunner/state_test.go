package allocrunner

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestClientStatus(t *testing.T) {
	ts := func(state string, failed bool) *structs.TaskState {
		return &structs.TaskState{State: state, Failed: failed}
	}
	pending, running := ts(structs.TaskStatePending, false), ts(structs.TaskStateRunning, false)
	done, failed := ts(structs.TaskStateDead, false), ts(structs.TaskStateDead, true)
	tests := []struct {
		name       string
		states     map[string]*structs.TaskState
		want, desc string
	}{
		{"no tasks", nil, structs.AllocClientStatusPending, DescPending},
		{"all pending", map[string]*structs.TaskState{"a": pending, "b": pending}, structs.AllocClientStatusPending, DescPending},
		{"one running", map[string]*structs.TaskState{"a": pending, "b": running}, structs.AllocClientStatusRunning, DescRunning},
		{"running and complete", map[string]*structs.TaskState{"a": done, "b": running}, structs.AllocClientStatusRunning, DescRunning},
		{"pending and complete", map[string]*structs.TaskState{"a": done, "b": pending}, structs.AllocClientStatusPending, DescPending},
		{"all complete", map[string]*structs.TaskState{"a": done, "b": done}, structs.AllocClientStatusComplete, DescComplete},
		{"failed wins over running", map[string]*structs.TaskState{"a": failed, "b": running}, structs.AllocClientStatusFailed, DescFailed},
		{"failed and complete", map[string]*structs.TaskState{"a": failed, "b": done}, structs.AllocClientStatusFailed, DescFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, desc := ClientStatus(tc.states)
			if got != tc.want || desc != tc.desc {
				t.Errorf("ClientStatus = %q, %q; want %q, %q", got, desc, tc.want, tc.desc)
			}
		})
	}
}
