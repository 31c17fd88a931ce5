package command

import (
	"testing"

	"github.com/drover-io/drover/api"
)

func TestFormatPlanScores(t *testing.T) {
	metrics := map[string]*api.AllocationMetric{
		"web": {NodesEvaluated: 3, NodesFiltered: 1, NodesInPool: 3, ScoreMetaData: []*api.NodeScoreMeta{
			{NodeID: "aaaaaaaa-1111", Scores: map[string]float64{"binpack": 0.4, "node-affinity": 1}, NormScore: 1.4},
			{NodeID: "bbbbbbbb-2222", Scores: map[string]float64{"binpack": 0.2, "node-affinity": 0}, NormScore: 0.2},
		}},
	}
	got := formatPlanScores(metrics, map[string]string{"aaaaaaaa-1111": "large"})
	want := `
Placement Scores:

Task Group "web": 3 nodes evaluated, 1 filtered, 0 exhausted, of 3 in the pool
Node      Class   binpack  node-affinity  final score
aaaaaaaa  large   0.400    1.000          1.400
bbbbbbbb  <none>  0.200    0.000          0.200
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := formatPlanScores(nil, nil); got != "" {
		t.Fatalf("no placements: %q", got)
	}
}
