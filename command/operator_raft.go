package command

import (
	"fmt"

	"github.com/drover-io/drover/api"
)

func runOperatorRaftListPeers(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator raft list-peers", "[options]", `
List the servers of the raft configuration: the voters whose majority must
agree on every change of the cluster state, which one leads, and where raft
reaches each.`)
	stale := fset.Bool("stale", false, "Let any server answer from its own view, rather than the leader (works without a leader).")
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
	conf, err := c.Operator().RaftGetConfiguration(&api.QueryOptions{AllowStale: *stale})
	if err != nil {
		return m.fail("querying the raft configuration", err)
	}
	var rows [][]string
	for _, s := range conf.Servers {
		rows = append(rows, []string{s.Node, s.ID, s.Address, raftState(s), fmt.Sprint(s.Voter), s.RaftProtocol})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Node", "ID", "Address", "State", "Voter", "RaftProtocol"}, rows))
	return exitOK
}

func runOperatorRaftRemovePeer(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator raft remove-peer", "[options]", `
Remove a server from the raft configuration, by its raft ID (list-peers
shows it) or its address. Use it for a server that is gone for good and that
autopilot did not remove; a removed server that is still running rejoins
through its gossip pool.`)
	id := fset.String("peer-id", "", "The raft ID of the server to remove.")
	addr := fset.String("peer-address", "", "The address (host:port) of the server to remove.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 || (*id == "") == (*addr == "") {
		return m.usageError(fset, "give -peer-id or -peer-address, one of them")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	var err error
	if *id != "" {
		err = c.Operator().RaftRemovePeerByID(*id, nil)
	} else {
		err = c.Operator().RaftRemovePeerByAddress(*addr, nil)
	}
	if err != nil {
		return m.fail("removing the server from raft", err)
	}
	fmt.Fprintf(m.stdout, "Removed peer %s%s\n", *id, *addr)
	return exitOK
}
