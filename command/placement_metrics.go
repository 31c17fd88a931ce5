package command

import (
	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
)

// scorerColumns are the score components `alloc status -verbose` shows,
// in Nomad's order; a column appears when some node has the component.
var scorerColumns = []string{"binpack", "devices", "node-affinity", "allocation-spread", "node-reschedule-penalty"}

// formatPlacementMetrics renders how the scheduler chose the allocation's
// node (`alloc status -verbose`): the nodes it filtered or found full,
// then the scores of the chosen node and the runners-up it was compared
// with, each component and the final score. "" when the allocation
// carries no metrics.
func formatPlacementMetrics(m *api.AllocationMetric) string {
	if m == nil || (len(m.ScoreMetaData) == 0 && m.NodesFiltered == 0 && m.NodesExhausted == 0) {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nPlacement Metrics\n")
	fmt.Fprintf(&b, "  * %d nodes evaluated, %d filtered, %d exhausted, of %d in the pool\n",
		m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted, m.NodesInPool)
	for _, c := range sortedKeys(m.ConstraintFiltered) {
		fmt.Fprintf(&b, "  * Constraint %q: %d nodes excluded by filter\n", c, m.ConstraintFiltered[c])
	}
	for _, d := range sortedKeys(m.DimensionExhausted) {
		fmt.Fprintf(&b, "  * Dimension %q exhausted on %d nodes\n", d, m.DimensionExhausted[d])
	}
	if len(m.ScoreMetaData) == 0 {
		return b.String()
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
		row := []string{s.NodeID}
		for _, c := range cols {
			row = append(row, fmt.Sprintf("%.3f", s.Scores[c]))
		}
		rows = append(rows, append(row, fmt.Sprintf("%.3f", s.NormScore)))
	}
	b.WriteString(formatTable(append(append([]string{"Node"}, cols...), "final score"), rows))
	return b.String()
}
