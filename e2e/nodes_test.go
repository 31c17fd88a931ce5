package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// nodesCluster is one server-only agent and client-only agents joined to
// it, with short heartbeats so that a lost client is noticed in seconds.
type nodesCluster struct {
	server  *agent
	rpcPort int
	clients map[string]*agent
	data    map[string]string
}

// startNodesCluster starts the server and the named clients, and waits
// for the clients' nodes to be ready.
func startNodesCluster(t *testing.T, clients ...string) *nodesCluster {
	t.Helper()
	requireTwoAgents(t)
	nc := &nodesCluster{rpcPort: freePort(t), clients: map[string]*agent{}, data: map[string]string{}}
	httpPort := freePort(t)
	nc.server = startKillableAgent(t, "server", fmt.Sprintf(`
name      = "server"
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
  rpc  = %d
  serf = 0 # a free port: tests run in parallel (never Nomad's 4648)
}
server {
  enabled           = true
  bootstrap_expect  = 1
  min_heartbeat_ttl = "1s"
  heartbeat_grace   = "2s"
}
`, t.TempDir(), httpPort, nc.rpcPort), httpPort)
	for _, name := range clients {
		nc.addClient(t, name)
	}
	nc.waitReady(t, len(clients))
	return nc
}

// addClient starts a client-only agent named name. Its tasks are killed
// when the test ends, whatever became of the agent.
func (nc *nodesCluster) addClient(t *testing.T, name string) {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() { killLeftovers(t, dir) })
	port := freePort(t)
	nc.data[name] = dir
	nc.clients[name] = startKillableAgent(t, name, fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
}
client {
  enabled = true
  servers = ["127.0.0.1:%d"]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, name, dir, port, nc.rpcPort), port)
}

// waitReady waits until n nodes are ready.
func (nc *nodesCluster) waitReady(t *testing.T, n int) {
	t.Helper()
	c := nc.server.client(t)
	waitFor(t, 90*time.Second, fmt.Sprintf("%d nodes ready", n), func() (bool, string) {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, node := range nodes {
			if node.Status == api.NodeStatusReady {
				ready++
			}
		}
		return ready == n, fmt.Sprintf("%d nodes, %d ready", len(nodes), ready)
	})
}

// nodeID returns the ID of the node named name.
func (nc *nodesCluster) nodeID(t *testing.T, name string) string {
	t.Helper()
	nodes, _, err := nc.server.client(t).Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("no node named %q", name)
	return ""
}

// startKillableAgent is startConfiguredAgent for an agent the test may
// kill: at the end it is stopped only if it still runs.
func startKillableAgent(t *testing.T, name, hcl string, httpPort int) *agent {
	t.Helper()
	return launchAgent(t, agentSpec{name: name, config: hcl, httpPort: httpPort,
		args: []string{"-log-level", "debug"}, killable: true})
}

// sleepJob is a service job of count sleeping raw_exec tasks, with a
// migrate block, placed on nodes of the given names.
func sleepJob(id string, count int, migrate string) string {
	return fmt.Sprintf(`job %q {
  type = "service"
  group "g" {
    count = %d
    migrate {
%s
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, id, count, migrate)
}

// nodeJobAllocs lists a job's allocations with their node names.
func nodeJobAllocs(t *testing.T, c *api.Client, job string) []*api.AllocationListStub {
	t.Helper()
	allocs, _, err := c.Jobs().Allocations(job, true, nil)
	if err != nil {
		t.Fatalf("allocations of %s: %v", job, err)
	}
	return allocs
}

// TestNodeLostAllocsReplaced kills a client with SIGKILL: once its
// heartbeat TTL and grace pass its node is down, its allocations lost,
// and their replacements run on the other client.
func TestNodeLostAllocsReplaced(t *testing.T) {
	t.Parallel()
	nc := startNodesCluster(t, "node-b")
	c := nc.server.client(t)
	if r := nc.server.cli(t, "job", "run", "-detach", writeFile(t, "lost.nomad.hcl", sleepJob("lost", 4, ""))); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	runningOn := func() map[string]int {
		out := map[string]int{}
		for _, a := range nodeJobAllocs(t, c, "lost") {
			if a.ClientStatus == "running" && a.DesiredStatus == "run" {
				out[a.NodeName]++
			}
		}
		return out
	}
	waitFor(t, 90*time.Second, "4 allocations running on node-b", func() (bool, string) {
		on := runningOn()
		return on["node-b"] == 4, fmt.Sprint(on)
	})
	nc.addClient(t, "node-a")
	nc.waitReady(t, 2)
	lostOnB := 4
	bID := nc.nodeID(t, "node-b")
	if err := nc.clients["node-b"].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-nc.clients["node-b"].exited
	waitFor(t, 60*time.Second, "node-b down", func() (bool, string) {
		n, _, err := c.Nodes().Info(bID, nil)
		if err != nil {
			return false, err.Error()
		}
		return n.Status == api.NodeStatusDown, n.Status
	})
	waitFor(t, 90*time.Second, "the lost allocations replaced on node-a", func() (bool, string) {
		lost := 0
		for _, a := range nodeJobAllocs(t, c, "lost") {
			if a.NodeName == "node-b" && a.ClientStatus == "lost" {
				lost++
			}
		}
		on := runningOn()
		return lost == lostOnB && on["node-a"] == 4, fmt.Sprintf("%d lost, running %v", lost, on)
	})
}

// TestNodeDrainMaxParallel drains a node running a count = 3 service with
// migrate max_parallel = 1: the allocations move to the other node one at
// a time (at most one marked and not yet stopped on its client, or
// replaced and not yet running, at any moment), `node drain -monitor`
// reports the drain complete, and the node stays ineligible.
func TestNodeDrainMaxParallel(t *testing.T) {
	t.Parallel()
	nc := startNodesCluster(t, "node-a")
	c := nc.server.client(t)
	migrate := `      max_parallel     = 1
      health_check     = "task_states"
      min_healthy_time = "2s"`
	if r := nc.server.cli(t, "job", "run", writeFile(t, "drain.nomad.hcl", sleepJob("drain", 3, migrate))); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	waitFor(t, 90*time.Second, "3 allocations running on node-a", func() (bool, string) {
		n := 0
		for _, a := range nodeJobAllocs(t, c, "drain") {
			if a.ClientStatus == "running" {
				n++
			}
		}
		return n == 3, fmt.Sprintf("%d running", n)
	})
	nc.addClient(t, "node-b")
	nc.waitReady(t, 2)
	aID := nc.nodeID(t, "node-a")

	// Watch the migration while the drain runs: max_parallel = 1 keeps
	// at least count - 1 allocations running (desired run, and running)
	// at every moment.
	stop := make(chan struct{})
	watched := make(chan string, 1)
	go func() {
		fewest, report := 3, ""
		for {
			select {
			case <-stop:
				watched <- report
				return
			case <-time.After(20 * time.Millisecond): // sampling, not waiting for an event
			}
			allocs, _, err := c.Jobs().Allocations("drain", true, nil)
			if err != nil {
				continue
			}
			running := 0
			for _, a := range allocs {
				if a.DesiredStatus == "run" && a.ClientStatus == "running" {
					running++
				}
			}
			if running < fewest {
				fewest, report = running, fmt.Sprintf("only %d of 3 allocations running at one moment", running)
			}
		}
	}()
	r := nc.server.cli(t, "node", "drain", "-enable", "-yes", "-deadline", "5m", "-monitor", aID[:8])
	close(stop)
	worst := <-watched
	if r.code != 0 || !strings.Contains(r.stdout, "Drain complete") {
		t.Fatalf("node drain -monitor:\n%s", r)
	}
	if strings.HasPrefix(worst, "only 0") || strings.HasPrefix(worst, "only 1") {
		t.Errorf("max_parallel = 1 not respected: %s", worst)
	} else {
		t.Logf("during the drain: %s", worst)
	}
	onB := 0
	for _, a := range nodeJobAllocs(t, c, "drain") {
		if a.NodeName == "node-b" && a.DesiredStatus == "run" {
			onB++
		}
	}
	if onB != 3 {
		t.Errorf("%d allocations on node-b after the drain, want 3", onB)
	}
	n, _, err := c.Nodes().Info(aID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.DrainStrategy != nil || n.SchedulingEligibility != api.NodeSchedulingIneligible || n.LastDrain == nil || n.LastDrain.Status != "complete" {
		t.Errorf("after the drain: strategy %+v, %s, last %+v", n.DrainStrategy, n.SchedulingEligibility, n.LastDrain)
	}
	if r := nc.server.cli(t, "node", "eligibility", "-enable", aID[:8]); r.code != 0 {
		t.Errorf("node eligibility -enable:\n%s", r)
	}
}

// TestNodeDisconnectReconnect stops a client's agent with SIGSTOP (its
// heartbeats stop; its tasks, under their shims, keep running) for a job
// with a disconnect block: its node turns disconnected and its
// allocations unknown, not lost; replace = true places replacements on the
// other client meanwhile. After SIGCONT the node is ready again and
// reconcile = keep_original keeps the originals and stops the
// replacements: in the end each allocation index runs once.
func TestNodeDisconnectReconnect(t *testing.T) {
	t.Parallel()
	nc := startNodesCluster(t, "node-b")
	c := nc.server.client(t)
	job := `job "disc" {
  type = "service"
  group "g" {
    count = 2
    disconnect {
      lost_after = "5m"
      replace    = true
      reconcile  = "keep_original"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`
	if r := nc.server.cli(t, "job", "run", "-detach", writeFile(t, "disc.nomad.hcl", job)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	running := func() map[string]int {
		out := map[string]int{}
		for _, a := range nodeJobAllocs(t, c, "disc") {
			if a.DesiredStatus == "run" {
				out[a.NodeName+":"+a.ClientStatus]++
			}
		}
		return out
	}
	waitFor(t, 90*time.Second, "2 allocations running on node-b", func() (bool, string) {
		on := running()
		return on["node-b:running"] == 2, fmt.Sprint(on)
	})
	nc.addClient(t, "node-a")
	nc.waitReady(t, 2)
	b := nc.clients["node-b"]
	bID := nc.nodeID(t, "node-b")
	if err := b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = b.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	waitFor(t, 60*time.Second, "node-b disconnected, its allocations unknown and replaced on node-a", func() (bool, string) {
		n, _, err := c.Nodes().Info(bID, nil)
		if err != nil {
			return false, err.Error()
		}
		on := running()
		return n.Status == api.NodeStatusDisconnected && on["node-b:unknown"] == 2 && on["node-a:running"] == 2,
			n.Status + " " + fmt.Sprint(on)
	})
	if err := b.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	waitFor(t, 90*time.Second, "node-b back, its allocations kept and the replacements stopped", func() (bool, string) {
		n, _, err := c.Nodes().Info(bID, nil)
		if err != nil {
			return false, err.Error()
		}
		stoppedOnA := 0
		for _, a := range nodeJobAllocs(t, c, "disc") {
			if a.NodeName == "node-a" && a.DesiredStatus == "stop" && a.ClientStatus == "complete" {
				stoppedOnA++
			}
		}
		on := running()
		return n.Status == api.NodeStatusReady && on["node-b:running"] == 2 && len(on) == 1 && stoppedOnA == 2,
			fmt.Sprintf("%s %v, %d stopped on node-a", n.Status, on, stoppedOnA)
	})
}
