package taskrunner

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

// The driver learns the group's network mode from the TaskConfig.
func TestTaskRunnerNetworkMode(t *testing.T) {
	cases := []struct {
		name     string
		networks []*structs.NetworkResource
		want     string
	}{
		{"no network block", nil, ""},
		{"no mode", []*structs.NetworkResource{{}}, ""},
		{"none", []*structs.NetworkResource{{Mode: structs.NetworkModeNone}}, structs.NetworkModeNone},
		{"host", []*structs.NetworkResource{{Mode: structs.NetworkModeHost}}, structs.NetworkModeHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alloc := testAlloc(structs.JobTypeBatch, &structs.Task{Config: map[string]any{"run_for": "1ms"}})
			alloc.Job.TaskGroups[0].Networks = tc.networks
			h := newHarness(t, alloc, nil, nil)
			cfg, err := h.tr.buildTaskConfig(alloc, alloc.Job.TaskGroups[0].Tasks[0], "abcd1234")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.NetworkMode != tc.want {
				t.Errorf("NetworkMode = %q, want %q", cfg.NetworkMode, tc.want)
			}
		})
	}
}
