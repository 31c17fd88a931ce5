package command

import (
	"strconv"

	"github.com/drover-io/drover/api"
)

// formatHostVolumes renders the node's host volumes for `node status
// -verbose`, as Nomad's: name, read-only, source path; "" without verbose
// or volumes.
func formatHostVolumes(n *api.Node, verbose bool) string {
	if !verbose || len(n.HostVolumes) == 0 {
		return ""
	}
	var rows [][]string
	for _, name := range sortedKeys(n.HostVolumes) {
		hv := n.HostVolumes[name]
		if hv == nil {
			continue
		}
		rows = append(rows, []string{name, strconv.FormatBool(hv.ReadOnly), hv.Path})
	}
	return "\nHost Volumes\n" + formatTable([]string{"Name", "ReadOnly", "Source"}, rows)
}
