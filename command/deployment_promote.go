package command

import (
	"strings"

	"github.com/drover-io/drover/api"
)

func runDeploymentPromote(m *Meta, args []string) int {
	var groups groupFlags
	return deploymentChange(m, args, "promote", `
Promote the canaries of an active deployment: the old allocations they
replace stop, and the rest of each promoted task group is replaced
max_parallel at a time. Every canary of a promoted group must be
healthy. Without -group every group with canaries is promoted. Unless
-detach is given, follow the evaluation this creates.`, func(fs *flagSet) {
		fs.Var(&groups, "group", "A task group to promote; repeat it for several. None promotes every group.")
	}, func(d *api.Deployments, id string) (*api.DeploymentUpdateResponse, error) {
		if len(groups) == 0 {
			r, _, err := d.PromoteAll(id, nil)
			return r, err
		}
		r, _, err := d.PromoteGroups(id, groups, nil)
		return r, err
	})
}

// groupFlags collects a repeated -group flag.
type groupFlags []string

// String returns the groups, comma separated.
func (g *groupFlags) String() string { return strings.Join(*g, ",") }

// Set adds a group.
func (g *groupFlags) Set(v string) error {
	*g = append(*g, v)
	return nil
}
