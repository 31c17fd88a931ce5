package command

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drover-io/drover/api"
)

// shortIDLen is how much of an ID tables show unless -verbose.
const shortIDLen = 8

// shortID cuts id to its first 8 characters unless full is set.
func shortID(id string, full bool) string {
	if full || len(id) <= shortIDLen {
		return id
	}
	return id[:shortIDLen]
}

// formatTime renders t as RFC 3339 in UTC; the zero time as "<none>".
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "<none>"
	}
	return t.UTC().Format(time.RFC3339)
}

// formatUnixNano renders Unix nanoseconds as formatTime does.
func formatUnixNano(ns int64) string {
	if ns == 0 {
		return "<none>"
	}
	return formatTime(time.Unix(0, ns))
}

// timeAgo renders how long before now t was, with its two largest units:
// "now", "45s ago", "2m ago", "2m10s ago", "1h5m ago", "3d4h ago". A time
// in the future reads "in 5s".
func timeAgo(t, now time.Time) string {
	if t.IsZero() {
		return "<none>"
	}
	d := now.Sub(t).Round(time.Second)
	suffix, prefix := " ago", ""
	if d < 0 {
		d, suffix, prefix = -d, "", "in "
	}
	if d < time.Second {
		return "now"
	}
	units := []struct {
		name string
		size time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}}
	var parts []string
	for _, u := range units {
		if len(parts) == 2 {
			break
		}
		n := d / u.size
		d -= n * u.size
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", n, u.name))
		} else if len(parts) == 1 {
			break // "2h" rather than "2h0m"
		}
	}
	return prefix + strings.Join(parts, "") + suffix
}

// timeAgoNano is timeAgo for Unix nanoseconds.
func timeAgoNano(ns int64, now time.Time) string {
	if ns == 0 {
		return "<none>"
	}
	return timeAgo(time.Unix(0, ns), now)
}

// kv is one line of a "Key = Value" block.
type kv struct{ k, v string }

// formatKV renders pairs with the "=" signs aligned.
func formatKV(pairs []kv) string {
	width := 0
	for _, p := range pairs {
		width = max(width, len(p.k))
	}
	var b strings.Builder
	for _, p := range pairs {
		v := p.v
		if v == "" {
			v = "<none>"
		}
		fmt.Fprintf(&b, "%-*s = %s\n", width, p.k, v)
	}
	return b.String()
}

// formatTable renders rows under header as columns two spaces apart.
func formatTable(header []string, rows [][]string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush() // a strings.Builder does not fail
	// tabwriter pads every cell but the last; trailing spaces of rows whose
	// last cells are empty are noise.
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// placementFailure renders why a group's allocations could not be placed,
// one "* reason" line per cause, indented by indent.
func placementFailure(group string, m *api.AllocationMetric, indent string) string {
	var b strings.Builder
	n := m.CoalescedFailures + 1
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%sTask Group %q (failed to place %d allocation%s):\n", indent, group, n, plural)
	line := func(format string, a ...any) {
		fmt.Fprintf(&b, "%s  * "+format+"\n", append([]any{indent}, a...)...)
	}
	if m.NodesEvaluated == 0 {
		line("No nodes were eligible for evaluation")
	}
	for _, dc := range sortedKeys(m.NodesAvailable) {
		if m.NodesAvailable[dc] == 0 {
			line("No nodes are available in datacenter %q", dc)
		}
	}
	if m.NodesExhausted > 0 {
		line("Resources exhausted on %d nodes", m.NodesExhausted)
	}
	for _, c := range sortedKeys(m.ClassExhausted) {
		line("Class %q exhausted on %d nodes", c, m.ClassExhausted[c])
	}
	for _, d := range sortedKeys(m.DimensionExhausted) {
		line("Dimension %q exhausted on %d nodes", d, m.DimensionExhausted[d])
	}
	for _, q := range m.QuotaExhausted {
		line("Quota limit hit %q", q)
	}
	for _, c := range sortedKeys(m.ClassFiltered) {
		line("Class %q: %d nodes excluded by filter", c, m.ClassFiltered[c])
	}
	for _, c := range sortedKeys(m.ConstraintFiltered) {
		line("Constraint %q: %d nodes excluded by filter", c, m.ConstraintFiltered[c])
	}
	return b.String()
}

// placementFailures renders every group of an evaluation's FailedTGAllocs,
// in group order.
func placementFailures(failed map[string]*api.AllocationMetric, indent string) string {
	var b strings.Builder
	for i, g := range sortedKeys(failed) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(placementFailure(g, failed[g], indent))
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// orNone returns s, or "<none>" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// derefString returns *p, or "" for nil.
func derefString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// derefInt returns *p, or 0 for nil.
func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// formatMB renders megabytes as people read them: "300 MiB", "8.0 GiB".
func formatMB(mb int64) string {
	if mb >= 1024 {
		return fmt.Sprintf("%.1f GiB", float64(mb)/1024)
	}
	return fmt.Sprintf("%d MiB", mb)
}
