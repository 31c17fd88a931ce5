package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestDeploymentAllocations: a deployment lists the allocations it placed,
// not those of the job's earlier version; an unknown deployment none.
func TestDeploymentAllocations(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerNode(t, s, testNode("n1", 8000, 8192))
	v1 := testJob("web", 2, 100, 100)
	v1.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthyDeadline: time.Minute}
	registerJob(t, s, v1)
	jobIdle(t, s, "web")
	v2 := v1.Copy()
	v2.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	registerJob(t, s, v2)
	jobIdle(t, s, "web")
	d := latestDeployment(t, s, "web")

	resp, err := s.DeploymentAllocations(ctx, &structs.DeploymentSpecificRequest{DeploymentID: d.ID[:8]})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, a := range ofVersion(t, s, "web", 1) {
		want = append(want, a.ID)
	}
	for _, a := range resp.Allocations {
		got = append(got, a.ID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("deployment allocations %v, want the new version's %v", got, want)
	}
	none, err := s.DeploymentAllocations(ctx, &structs.DeploymentSpecificRequest{DeploymentID: structs.GenerateUUID()})
	if err != nil || none.Allocations == nil || len(none.Allocations) != 0 {
		t.Fatalf("unknown deployment: %+v, %v", none, err)
	}
}
