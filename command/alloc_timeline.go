package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

// showAllocTimeline prints the allocation's timeline (`alloc status
// -verbose`), best effort: an agent that serves none (Nomad's, or one that
// restarted since) leaves it out.
func (m *Meta) showAllocTimeline(c *api.Client, allocID string) {
	tl, err := c.Allocations().Timeline(allocID)
	if err != nil || len(tl.Steps) == 0 {
		return
	}
	fmt.Fprint(m.stdout, "\n"+formatAllocTimeline(tl))
}

// formatAllocTimeline renders an allocation's timeline: each step, when
// it was reached (UTC), and how long after the first step and after the
// step before it.
func formatAllocTimeline(tl *api.AllocTimeline) string {
	var b strings.Builder
	b.WriteString("Timeline:\n")
	first := time.Unix(0, tl.Steps[0].Time)
	prev := first
	rows := make([][]string, 0, len(tl.Steps))
	for _, s := range tl.Steps {
		at := time.Unix(0, s.Time)
		rows = append(rows, []string{s.Name, at.UTC().Format("15:04:05.000000"),
			"+" + roundDuration(at.Sub(first)).String(), "+" + roundDuration(at.Sub(prev)).String()})
		prev = at
	}
	b.WriteString(formatTable([]string{"Step", "Time", "Since First", "Since Previous"}, rows))
	return b.String()
}

// roundDuration rounds d for display: to 10µs below a second, else to the
// millisecond.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
