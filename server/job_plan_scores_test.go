package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestJobPlanPlacementMetrics(t *testing.T) {
	s := newTestServer(t, nil)
	registerNode(t, s, testNode("n1", 4000, 4096))
	big := testNode("n2", 8000, 8192)
	big.NodeClass = "large"
	registerNode(t, s, big)
	job := testJob("web", 3, 100, 100)
	job.TaskGroups[0].Affinities = []*structs.Affinity{{LTarget: "${node.class}", Operand: "=", RTarget: "large", Weight: 100}}
	resp, err := s.JobPlan(context.Background(), &structs.JobPlanRequest{Job: job})
	if err != nil {
		t.Fatal(err)
	}
	m := resp.PlacementMetrics["web"]
	if m == nil || len(m.ScoreMetaData) != 2 || m.NodesEvaluated != 2 {
		t.Fatalf("placement metrics %+v: want the scores of both nodes", m)
	}
	if best := m.ScoreMetaData[0]; best.NodeID != "n2" || best.Scores[structs.ScorerNodeAffinity] != 1 {
		t.Fatalf("best node %+v: want n2 for its affinity", best)
	}
}
