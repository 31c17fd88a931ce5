package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// twoNodes says what a pair of non-dev agents adds to the shared shape:
// node-a runs a server and a client, node-b a client that joins it.
type twoNodes struct {
	// clientA and clientB go inside each agent's client block; extraA and
	// extraB at the top level of its config (plugin blocks).
	clientA, clientB, extraA, extraB string
	// driver, when set, must be healthy on both nodes before the test goes on.
	driver string
}

// startTwoNodes starts node-a (server and client) and node-b (client of
// node-a's server) on free ports, kills what their tasks leave when the
// test ends (non-dev agents leave their tasks running when they stop), and
// returns node-a and the two data dirs once both nodes are ready.
func startTwoNodes(t *testing.T, n twoNodes) (a *agent, dataA, dataB string) {
	t.Helper()
	httpA, rpcA, httpB := freePort(t), freePort(t), freePort(t)
	dataA, dataB = t.TempDir(), t.TempDir()
	// Cleanups run last-registered first: this one after both agents stop.
	t.Cleanup(func() {
		killLeftovers(t, dataA)
		killLeftovers(t, dataB)
	})
	a = startConfiguredAgent(t, "node-a", fmt.Sprintf(`
name      = "node-a"
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
  rpc  = %d
  serf = 0 # a free port: tests run in parallel (never Nomad's 4648)
}
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
%s
}
%s
`, dataA, httpA, rpcA, n.clientA, n.extraA), httpA)
	startConfiguredAgent(t, "node-b", fmt.Sprintf(`
name      = "node-b"
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
}
client {
  enabled = true
  servers = ["127.0.0.1:%d"]
%s
}
%s
`, dataB, httpB, rpcA, n.clientB, n.extraB), httpB)
	c := a.client(t)
	what := "both nodes ready"
	if n.driver != "" {
		what += " with " + n.driver
	}
	waitFor(t, 90*time.Second, what, func() (bool, string) {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, node := range nodes {
			if node.Status != api.NodeStatusReady {
				continue
			}
			if d := node.Drivers[n.driver]; n.driver == "" || (d != nil && d.Healthy) {
				ready++
			}
		}
		return ready == 2, fmt.Sprintf("%d nodes, %d ready", len(nodes), ready)
	})
	return a, dataA, dataB
}
