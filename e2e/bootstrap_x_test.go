package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// TestServerBootstrapExpectZeroJoinedByCLI: a server started with
// bootstrap_expect = 0 and nothing to join (as Nomad's API suite starts
// its second server) forms no cluster of its own: it logs that it waits
// to be joined, its health and `server members` say so. `drover server
// join` run against it with a running server's serf address adds it to
// that server's cluster: it follows the same leader, is a raft voter, and
// reads (from its own state, ?stale) a job registered on the other
// server. Before, it bootstrapped a cluster of one and the join was
// refused as joining another cluster.
func TestServerBootstrapExpectZeroJoinedByCLI(t *testing.T) {
	t.Parallel()
	ports := newPortSet()
	first := newClusterServer(t, ports, "boot1", 1, func() []string { return nil })
	waiting := newClusterServer(t, ports, "wait0", 0, func() []string { return nil })
	first.start(t)
	waiting.start(t)
	tc := &testCluster{}
	tc.waitLeader(t, []*clusterServer{first}, "")

	waitFor(t, clusterWait, "the waiting server to say it waits to be joined", func() (bool, string) {
		waiting.checkAlive(t)
		return strings.Contains(waiting.sinceLastStart(), "waiting to be joined to a cluster"), "not logged yet"
	})
	resp, err := http.Get(waiting.addr + "/v1/agent/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "waits to be joined") {
		t.Fatalf("health of the waiting server: %d %s", resp.StatusCode, body)
	}
	r := waiting.cli(t, "server", "members")
	if r.code != 0 || !strings.Contains(r.stderr, "server wait0.global waits to be joined to a cluster") {
		t.Fatalf("server members on the waiting server:\n%s", r)
	}
	if l, _ := waiting.client(t).Status().Leader(); l != "" {
		t.Fatalf("the waiting server has leader %q", l)
	}

	if err := registerJob(first.client(t), "before-join"); err != nil {
		t.Fatal(err)
	}
	r = waiting.cli(t, "server", "join", first.serfAddr())
	if r.code != 0 || !strings.Contains(r.stdout, "Joined 1 servers") {
		t.Fatalf("server join:\n%s", r)
	}
	leader := tc.waitLeader(t, []*clusterServer{first, waiting}, "")
	if leader != first {
		t.Fatalf("leader is %s, want boot1", leader.name)
	}
	waitFor(t, clusterWait, "both servers to be voters", func() (bool, string) {
		v := voters(t, first)
		return len(v) == 2, fmt.Sprint(v)
	})
	waitFor(t, clusterWait, "the joined server to hold the job", func() (bool, string) {
		job, _, err := waiting.client(t).Jobs().Info("before-join", &api.QueryOptions{AllowStale: true})
		if err != nil {
			return false, err.Error()
		}
		return job != nil && *job.ID == "before-join", "no job"
	})
	r = waiting.cli(t, "server", "members")
	if r.code != 0 || strings.Contains(r.stderr, "waits to be joined") || strings.Count(r.stdout, "alive") != 2 {
		t.Fatalf("server members once joined:\n%s", r)
	}
}
