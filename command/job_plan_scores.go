package command

import (
	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
)

// formatPlanScores renders, for `job plan -verbose`, how each group's
// first placement would choose its node: the nodes looked at, then the
// chosen node and the runners-up with their class, each score component
// and the final score. classes maps node IDs to their class; "" when the
// plan places nothing.
func formatPlanScores(metrics map[string]*api.AllocationMetric, classes map[string]string) string {
	if len(metrics) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nPlacement Scores:\n")
	for _, g := range sortedKeys(metrics) {
		m := metrics[g]
		fmt.Fprintf(&b, "\nTask Group %q: %d nodes evaluated, %d filtered, %d exhausted, of %d in the pool\n",
			g, m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted, m.NodesInPool)
		if len(m.ScoreMetaData) == 0 {
			continue
		}
		var cols []string
		for _, c := range scorerColumns {
			for _, s := range m.ScoreMetaData {
				if _, ok := s.Scores[c]; ok {
					cols = append(cols, c)
					break
				}
			}
		}
		rows := make([][]string, 0, len(m.ScoreMetaData))
		for _, s := range m.ScoreMetaData {
			row := []string{shortID(s.NodeID, false), orNone(classes[s.NodeID])}
			for _, c := range cols {
				row = append(row, fmt.Sprintf("%.3f", s.Scores[c]))
			}
			rows = append(rows, append(row, fmt.Sprintf("%.3f", s.NormScore)))
		}
		b.WriteString(formatTable(append(append([]string{"Node", "Class"}, cols...), "final score"), rows))
	}
	return b.String()
}

// nodeClasses returns the class of every node, by ID; nil when the nodes
// cannot be listed (the scores are then shown without classes).
func nodeClasses(c *api.Client) map[string]string {
	nodes, _, err := c.Nodes().List(nil)
	if err != nil {
		return nil
	}
	out := make(map[string]string, len(nodes))
	for _, n := range nodes {
		out[n.ID] = n.NodeClass
	}
	return out
}
