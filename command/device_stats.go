package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/drover-io/drover/api"
)

// showAllocStats prints the resource usage and device statistics of an
// allocation's tasks (`alloc status -stats`), read from the agent of the
// allocation's node.
func (m *Meta) showAllocStats(c *api.Client, allocID string) int {
	alloc, _, err := c.Allocations().Info(allocID, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying allocation %q", allocID), err)
	}
	usage, err := c.Allocations().Stats(alloc, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("querying the stats of allocation %q", allocID), err)
	}
	fmt.Fprint(m.stdout, formatAllocStats(alloc, usage))
	return 0
}

// formatDeviceStats renders one row per device instance: its group, ID,
// summary and every statistic.
func formatDeviceStats(groups []*api.DeviceGroupStats) string {
	if len(groups) == 0 {
		return "No device statistics\n"
	}
	var rows [][]string
	for _, g := range groups {
		ids := make([]string, 0, len(g.InstanceStats))
		for id := range g.InstanceStats {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			st := g.InstanceStats[id]
			var all []string
			if st.Stats != nil {
				keys := make([]string, 0, len(st.Stats.Attributes))
				for k := range st.Stats.Attributes {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					all = append(all, k+"="+st.Stats.Attributes[k].String())
				}
			}
			summary := ""
			if st.Summary != nil {
				summary = st.Summary.String()
				if st.Summary.Desc != "" {
					summary = st.Summary.Desc + " " + summary
				}
			}
			rows = append(rows, []string{g.ID(), id, orNone(summary), orNone(strings.Join(all, ", "))})
		}
	}
	return formatTable([]string{"Device Group", "ID", "Summary", "Stats"}, rows)
}

// formatNodeDevices renders the node's device groups, their attributes and
// how many instances are healthy; "" for a node without devices.
func formatNodeDevices(n *api.Node) string {
	if n.NodeResources == nil || len(n.NodeResources.Devices) == 0 {
		return ""
	}
	var rows [][]string
	for _, g := range n.NodeResources.Devices {
		healthy := 0
		var unhealthy []string
		for _, d := range g.Instances {
			if d.Healthy {
				healthy++
			} else {
				unhealthy = append(unhealthy, d.ID+": "+orNone(d.HealthDescription))
			}
		}
		keys := make([]string, 0, len(g.Attributes))
		for k := range g.Attributes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var attrs []string
		for _, k := range keys {
			attrs = append(attrs, k+"="+g.Attributes[k].String())
		}
		rows = append(rows, []string{g.ID(), strconv.Itoa(healthy) + "/" + strconv.Itoa(len(g.Instances)),
			orNone(strings.Join(attrs, ", ")), orNone(strings.Join(unhealthy, "; "))})
	}
	return "\nDevices\n" + formatTable([]string{"Device Group", "Healthy", "Attributes", "Unhealthy"}, rows)
}

// showNodeStats prints the host statistics of node nodeID (`node status
// -stats`): the queried agent forwards the request to that node's agent.
func (m *Meta) showNodeStats(c *api.Client, nodeID string) int {
	hs, err := c.Nodes().Stats(&api.QueryOptions{Params: map[string]string{"node_id": nodeID}})
	if err != nil {
		return m.fail("querying node stats", err)
	}
	fmt.Fprint(m.stdout, formatHostStats(hs))
	return 0
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
