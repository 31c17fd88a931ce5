package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drover-io/drover/api"
)

func runServerMembers(m *Meta, args []string) int {
	fset := m.apiFlagSet("server members", "[options]", `
List the servers of the cluster as the gossip pool (serf) of the server
answering sees them: their state (alive, failed, left), which one leads,
their version, datacenter and region.`)
	detailed := fset.Bool("detailed", false, "Show each member's gossip tags.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	mem, err := c.Agent().Members()
	if err != nil {
		return m.fail("querying the servers", err)
	}
	leader, _ := c.Status().Leader()
	sort.Slice(mem.Members, func(i, j int) bool { return mem.Members[i].Name < mem.Members[j].Name })
	header := []string{"Name", "Address", "Port", "Status", "Leader", "Raft Version", "Build", "Datacenter", "Region"}
	if *detailed {
		header = []string{"Name", "Address", "Port", "Status", "Tags"}
	}
	var rows [][]string
	for _, mb := range mem.Members {
		if *detailed {
			var tags []string
			for _, k := range sortedKeys(mb.Tags) {
				tags = append(tags, k+"="+mb.Tags[k])
			}
			rows = append(rows, []string{mb.Name, mb.Addr, fmt.Sprint(mb.Port), mb.Status, strings.Join(tags, ",")})
			continue
		}
		// A server without gossip (-dev) lists itself with no RPC address
		// tag: alone, it leads when there is a leader.
		alone := mb.Tags["rpc_addr"] == "" && len(mem.Members) == 1
		isLeader := leader != "" && (mb.Tags["rpc_addr"] == leader || alone)
		rows = append(rows, []string{mb.Name, mb.Addr, fmt.Sprint(mb.Port), mb.Status, fmt.Sprint(isLeader),
			orNone(mb.Tags["raft_vsn"]), orNone(mb.Tags["build"]), mb.Tags["dc"], mb.Tags["region"]})
	}
	fmt.Fprint(m.stdout, formatTable(header, rows))
	if leader == "" {
		for _, name := range awaitingJoin(mem.Members) {
			fmt.Fprintf(m.stderr, "No cluster leader: server %s waits to be joined to a cluster (bootstrap_expect = 0): "+
				"run drover server join with a cluster server's serf address, or set bootstrap_expect = 1 to run it alone\n", name)
		}
	}
	return exitOK
}

// awaitingJoin returns the alive servers among members that wait to be
// joined to a cluster: bootstrap_expect 0 (they never bootstrap one) and
// no cluster ID yet.
func awaitingJoin(members []*api.AgentMember) []string {
	var out []string
	for _, mb := range members {
		if mb.Status == "alive" && mb.Tags["expect"] == "0" && mb.Tags["cluster_id"] == "" {
			out = append(out, mb.Name)
		}
	}
	return out
}

func runServerJoin(m *Meta, args []string) int {
	fset := m.apiFlagSet("server join", "[options] <address> [<address>...]", `
Make the agent's server join the gossip pool of other servers, given by
their serf addresses (host or host:4648). The leader then adds them to raft.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() == 0 {
		return m.usageError(fset, "give at least one server's serf address")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	n, err := c.Agent().Join(fset.Args()...)
	if err != nil {
		return m.fail("joining the servers", err)
	}
	fmt.Fprintf(m.stdout, "Joined %d servers successfully\n", n)
	return exitOK
}

func runServerForceLeave(m *Meta, args []string) int {
	fset := m.apiFlagSet("server force-leave", "[options] <node>", `
Mark a failed server as having left the cluster, so that the leader removes
it from raft (its vote no longer counts in the quorum). A server that is
alive rejoins on its own; this is for servers that are gone.`)
	prune := fset.Bool("prune", false, "Forget the member at once rather than after the gossip pool's reap interval.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the name of the server to remove (drover server members lists them)")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	if err := c.Agent().ForceLeave(fset.Arg(0), *prune); err != nil {
		return m.fail("forcing the server to leave", err)
	}
	return exitOK
}

// raftState names a raft server's role for list-peers.
func raftState(s *api.RaftServer) string {
	if s.Leader {
		return "leader"
	}
	return "follower"
}
