package server

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestNodeUpdateAllocVerdictNamesDeployment: NodeUpdateAlloc passes on the
// deployment a client's health verdict is for, so only a verdict for the
// alloc's own deployment counts: one for an earlier deployment or one
// outside any deployment ("", the migrate block's) is dropped.
func TestNodeUpdateAllocVerdictNamesDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("n1", 8000, 8192))
		job := testJob("web", 1, 100, 100)
		job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthyDeadline: time.Minute}
		registerJob(t, s, job)
		jobIdle(t, s, "web")
		allocs := running(t, s, "web")
		if len(allocs) != 1 || allocs[0].DeploymentID == "" {
			t.Fatalf("allocs = %+v, want one in a deployment", allocs)
		}
		a := allocs[0]
		steps := []struct {
			name      string
			verdictOf string
			counts    bool
		}{
			{"verdict for an earlier deployment", "an-earlier-deployment", false},
			{"verdict outside any deployment", "", false},
			{"verdict for the alloc's deployment", a.DeploymentID, true},
		}
		for _, st := range steps {
			healthy := true
			_, err := s.NodeUpdateAlloc(context.Background(), &structs.AllocUpdateRequest{NodeID: "n1", SecretID: "secret-n1",
				Alloc: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning, DeploymentID: st.verdictOf,
					DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: time.Now()}}}})
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			got, err := s.State().AllocByID(nil, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if counted := got.DeploymentStatus.IsHealthy(); counted != st.counts {
				t.Fatalf("%s: verdict counted = %v, want %v", st.name, counted, st.counts)
			}
			if got.ClientStatus != structs.AllocClientStatusRunning {
				t.Fatalf("%s: client status = %q, want running: the rest of the update applies", st.name, got.ClientStatus)
			}
		}
	})
}
