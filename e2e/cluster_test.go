package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/api"
)

// The cluster tests start three servers and two clients as real processes
// on 127.0.0.1, each on its own free ports, with their state on disk
// (docs/cluster.md). They wait for real events (an election, gossip) with
// bounds generous enough for a loaded machine.

// clusterWait bounds one wait of the cluster tests.
const clusterWait = 2 * time.Minute

// clusterServer is one server of a test cluster: a persistentAgent whose
// config the test writes (and may rewrite: a server that comes back on new
// ports).
type clusterServer struct {
	*persistentAgent
	serfPort int
	expect   int
	join     func() []string // the serf addresses to retry_join
	stopped  bool            // frozen with SIGSTOP
	ports    *portSet
	extra    string // more of the config file (a tls block)
}

// serfAddr is the server's gossip address.
func (s *clusterServer) serfAddr() string { return "127.0.0.1:" + strconv.Itoa(s.serfPort) }

// writeConfig writes the server's config file for its current ports.
func (s *clusterServer) writeConfig(t *testing.T) {
	t.Helper()
	var join []string
	for _, a := range s.join() {
		join = append(join, strconv.Quote(a))
	}
	cfg := fmt.Sprintf(`name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "DEBUG"

ports {
  http = %d
  rpc  = %d
  serf = %d
}

server {
  enabled          = true
  bootstrap_expect = %d
  server_join {
    retry_join     = [%s]
    retry_interval = "1s"
  }
}
`, s.name, s.dataDir, s.httpPort, s.rpcPort, s.serfPort, s.expect, strings.Join(join, ", "))
	cfg += s.extra
	if err := os.WriteFile(s.configPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// portSet hands out free ports, each once in a test. (freePort itself now
// never gives a port twice in a test process; the set predates that.)
type portSet struct {
	mu   sync.Mutex // guards used
	used map[int]bool
}

func newPortSet() *portSet { return &portSet{used: map[int]bool{}} }

// port returns a free port not handed out before.
func (p *portSet) port(t *testing.T) int {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		n := freePort(t)
		if !p.used[n] {
			p.used[n] = true
			return n
		}
	}
}

// newClusterServer prepares (does not start) a server on free ports.
func newClusterServer(t *testing.T, ports *portSet, name string, expect int, join func() []string) *clusterServer {
	t.Helper()
	requirePersistentAgent(t)
	s := &clusterServer{
		persistentAgent: &persistentAgent{agent: &agent{name: name, dataDir: t.TempDir()},
			role: roleServer, httpPort: ports.port(t), rpcPort: ports.port(t)},
		serfPort: ports.port(t), expect: expect, join: join, ports: ports,
	}
	s.addr = "http://127.0.0.1:" + strconv.Itoa(s.httpPort)
	s.configPath = filepath.Join(t.TempDir(), name+".hcl")
	s.writeConfig(t)
	t.Cleanup(func() {
		if s.running() {
			if s.stopped {
				_ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGCONT)
			}
			s.interrupt(t)
		}
		if t.Failed() && s.output != nil {
			t.Logf("server %s output (%d starts):\n%s", s.name, s.starts, s.output)
		}
	})
	return s
}

// moveTo gives the server new ports (its state stays): it comes back on
// another address.
func (s *clusterServer) moveTo(t *testing.T) {
	t.Helper()
	s.httpPort, s.rpcPort, s.serfPort = s.ports.port(t), s.ports.port(t), s.ports.port(t)
	s.addr = "http://127.0.0.1:" + strconv.Itoa(s.httpPort)
	s.writeConfig(t)
}

// testCluster is three servers and two client-only agents.
type testCluster struct {
	ports   *portSet
	servers []*clusterServer
	clients []*persistentAgent
}

// startTestCluster starts three servers expecting three, each retrying to
// join the other two, and two clients that know one server each (they
// learn the others from it).
func startTestCluster(t *testing.T) *testCluster {
	t.Helper()
	tc := &testCluster{ports: newPortSet()}
	for i := range 3 {
		idx := i
		tc.servers = append(tc.servers, newClusterServer(t, tc.ports, fmt.Sprintf("s%d", i+1), 3, func() []string {
			var out []string
			for j, o := range tc.servers {
				if j != idx {
					out = append(out, o.serfAddr())
				}
			}
			return out
		}))
	}
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	for _, s := range tc.servers {
		s.writeConfig(t) // now that every server's port is known
		// Every server gets the same key-encryption key before its first
		// start, as docs/cluster.md says to copy it: variables stay
		// readable whichever server leads.
		dir := filepath.Join(s.dataDir, "server")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "keyring.kek"), []byte(base64.StdEncoding.EncodeToString(kek)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s.start(t)
	}
	tc.waitLeader(t, tc.servers, "")
	for i := range 2 {
		c := newPersistentAgent(t, fmt.Sprintf("c%d", i+1), roleClient, tc.servers[i].rpcAddr())
		c.start(t)
		tc.clients = append(tc.clients, c)
	}
	waitFor(t, clusterWait, "both client nodes to be ready", func() (bool, string) {
		nodes, _, err := tc.servers[0].client(t).Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, n := range nodes {
			if n.Status == api.NodeStatusReady {
				ready++
			}
		}
		return ready == 2, fmt.Sprintf("%d of %d nodes ready", ready, len(nodes))
	})
	return tc
}

// waitLeader waits until every given server reports the same leader,
// other than notLeader, and returns the server that leads.
func (tc *testCluster) waitLeader(t *testing.T, servers []*clusterServer, notLeader string) *clusterServer {
	t.Helper()
	var leader *clusterServer
	waitFor(t, clusterWait, "every server to know the same leader", func() (bool, string) {
		seen := ""
		for _, s := range servers {
			s.checkAlive(t)
			l, err := s.client(t).Status().Leader()
			if err != nil {
				return false, fmt.Sprintf("%s: %v", s.name, err)
			}
			if l == "" || l == notLeader {
				return false, fmt.Sprintf("%s sees leader %q", s.name, l)
			}
			if seen != "" && l != seen {
				return false, fmt.Sprintf("servers disagree: %q and %q", seen, l)
			}
			seen = l
		}
		for _, s := range servers {
			if s.rpcAddr() == seen {
				leader = s
			}
		}
		return leader != nil, "the leader " + seen + " is none of the servers asked"
	})
	return leader
}

// voters returns the raft configuration's voters' addresses, as Nomad's
// API client reads them from a server.
func voters(t *testing.T, s *clusterServer) []string {
	t.Helper()
	nc, err := nomad.NewClient(&nomad.Config{Address: s.addr})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := nc.Operator().RaftGetConfiguration(nil)
	if err != nil {
		t.Fatalf("raft configuration from %s: %v", s.name, err)
	}
	var out []string
	for _, srv := range conf.Servers {
		if srv.Voter {
			out = append(out, srv.Address)
		}
	}
	slices.Sort(out)
	return out
}

// registerJob registers a job of count 0 (it places nothing: the test is
// about the write) through c.
func registerJob(c *api.Client, id string) error {
	job := &api.Job{ID: api.String(id), Name: api.String(id), Type: api.String("batch"), Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{Name: api.String("g"), Count: api.Int(0), Tasks: []*api.Task{{
			Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"},
		}}}}}
	_, _, err := c.Jobs().Register(job, nil)
	return err
}

// TestCluster runs a three-server cluster with two clients through what
// operators do to one: the leader killed under a stream of registrations,
// a server back on a new address, a snapshot saved and restored, a
// partition of the majority, and a restart of every server.
func TestCluster(t *testing.T) {
	t.Parallel()
	tc := startTestCluster(t)
	for _, s := range tc.servers {
		if v := voters(t, s); len(v) != 3 {
			t.Fatalf("%s: voters %v, want 3", s.name, v)
		}
	}
	t.Run("members", func(t *testing.T) {
		r := tc.servers[1].cli(t, "server", "members")
		if r.code != 0 || strings.Count(r.stdout, "alive") != 3 || strings.Count(r.stdout, "true") != 1 {
			t.Fatalf("server members: %s", r)
		}
		r = tc.clients[0].cli(t, "operator", "raft", "list-peers")
		if r.code != 0 || strings.Count(r.stdout, "follower") != 2 || strings.Count(r.stdout, "leader") != 1 {
			t.Fatalf("operator raft list-peers through a client: %s", r)
		}
		nc, err := nomad.NewClient(&nomad.Config{Address: tc.servers[2].addr})
		if err != nil {
			t.Fatal(err)
		}
		mem, err := nc.Agent().Members()
		if err != nil || len(mem.Members) != 3 {
			t.Fatalf("members through Nomad's API client: %+v, %v", mem, err)
		}
		// Every response says whether a leader is known.
		resp, err := http.Get(tc.servers[0].addr + "/v1/agent/self")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("X-Nomad-KnownLeader") != "true" || resp.Header.Get("X-Nomad-LastContact") == "" {
			t.Errorf("/v1/agent/self headers: %v", resp.Header)
		}
	})
	t.Run("kill the leader under writes", func(t *testing.T) { killLeaderUnderWrites(t, tc) })
	t.Run("schedule across servers", func(t *testing.T) { scheduleAcrossServers(t, tc) })
	t.Run("server rejoins on a new address", func(t *testing.T) { rejoinOnNewAddress(t, tc) })
	t.Run("snapshot round trip", func(t *testing.T) { snapshotRoundTrip(t, tc) })
	t.Run("minority stops accepting writes", func(t *testing.T) { minorityRefusesWrites(t, tc) })
	t.Run("restart every server", func(t *testing.T) { restartEveryServer(t, tc) })
	t.Run("duplicate server name", func(t *testing.T) { duplicateServerName(t, tc) })
}

// killLeaderUnderWrites: registrations stream in through a client-only
// agent and a follower while the leader is SIGKILLed. Every registration
// that was acknowledged is there afterwards, on every server; a new leader
// is elected within the bound.
func killLeaderUnderWrites(t *testing.T, tc *testCluster) {
	leader := tc.waitLeader(t, tc.servers, "")
	var rest []*clusterServer
	for _, s := range tc.servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	var (
		mu       sync.Mutex
		acked    []string
		failures []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	writer := func(name string, c *api.Client) {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("%s-%03d", name, i)
			err := registerJob(c, id)
			mu.Lock()
			if err == nil {
				acked = append(acked, id)
			} else {
				failures = append(failures, id+": "+err.Error())
			}
			mu.Unlock()
		}
	}
	wg.Add(2)
	go writer("via-client", tc.clients[0].client(t))
	go writer("via-follower", rest[0].client(t))
	// A variable, sealed by the leader about to die.
	secret := &api.Variable{Path: "app/db", Items: map[string]string{"password": "s3cret"}}
	if _, _, err := rest[0].client(t).Variables().Put(secret, false, 0, nil); err != nil {
		t.Fatalf("put a variable through %s: %v", rest[0].name, err)
	}
	waitFor(t, clusterWait, "registrations before the kill", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 10, fmt.Sprintf("%d acknowledged", len(acked))
	})
	killed := time.Now()
	leader.kill9(t)
	newLeader := tc.waitLeader(t, rest, leader.rpcAddr())
	t.Logf("a new leader (%s) %s after the leader's SIGKILL", newLeader.name, time.Since(killed).Round(10*time.Millisecond))
	mu.Lock()
	before := len(acked)
	mu.Unlock()
	waitFor(t, clusterWait, "registrations after the new election", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= before+10, fmt.Sprintf("%d acknowledged, %d before", len(acked), before)
	})
	close(stop)
	wg.Wait()
	t.Logf("%d registrations acknowledged, %d failed during the failover", len(acked), len(failures))
	// The new leader opens what the old one sealed (the root key came
	// through raft, the KEK is the same).
	for _, s := range rest {
		v, _, err := s.client(t).Variables().Read("app/db", nil)
		if err != nil || v.Items["password"] != "s3cret" {
			t.Fatalf("read the variable through %s after the failover: %+v, %v", s.name, v, err)
		}
	}
	for _, s := range rest {
		c := s.client(t)
		waitFor(t, clusterWait, "every acknowledged job on "+s.name, func() (bool, string) {
			jobs, _, err := c.Jobs().List(&api.QueryOptions{AllowStale: true})
			if err != nil {
				return false, err.Error()
			}
			have := map[string]bool{}
			for _, j := range jobs {
				have[j.ID] = true
			}
			for _, id := range acked {
				if !have[id] {
					return false, "acknowledged job " + id + " is missing"
				}
			}
			return true, ""
		})
	}
	// The killed server comes back and rejoins (its data dir intact).
	leader.start(t)
	waitFor(t, clusterWait, "the killed server to be a voter again", func() (bool, string) {
		v := voters(t, newLeader)
		return len(v) == 3 && slices.Contains(v, leader.rpcAddr()), fmt.Sprint(v)
	})
	tc.waitLeader(t, tc.servers, "")
}

// scheduleAcrossServers: a job registered through a follower is placed on
// the clients, whose allocations run.
func scheduleAcrossServers(t *testing.T, tc *testCluster) {
	leader := tc.waitLeader(t, tc.servers, "")
	var follower *clusterServer
	for _, s := range tc.servers {
		if s != leader {
			follower = s
		}
	}
	c := follower.client(t)
	job := &api.Job{ID: api.String("sleeper"), Name: api.String("sleeper"), Type: api.String("service"), Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{Name: api.String("g"), Count: api.Int(2), Tasks: []*api.Task{{
			Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sleep", "args": []string{"600"}},
			Resources: &api.Resources{CPU: api.Int(20), MemoryMB: api.Int(16)},
		}}}}}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register through %s: %v", follower.name, err)
	}
	waitFor(t, clusterWait, "two running allocations", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("sleeper", false, nil)
		if err != nil {
			return false, err.Error()
		}
		running := 0
		for _, a := range allocs {
			if a.ClientStatus == "running" {
				running++
			}
		}
		return running == 2, fmt.Sprintf("%d of %d running", running, len(allocs))
	})
}

// rejoinOnNewAddress: a follower stops and comes back on new ports with
// its state; it rejoins through retry_join, raft reaches it at its new
// address, and the leader records that address.
func rejoinOnNewAddress(t *testing.T, tc *testCluster) {
	leader := tc.waitLeader(t, tc.servers, "")
	var mover *clusterServer
	for _, s := range tc.servers {
		if s != leader {
			mover = s
		}
	}
	old := mover.rpcAddr()
	mover.interrupt(t)
	mover.moveTo(t)
	mover.start(t)
	waitFor(t, clusterWait, "the moved server's new address in raft", func() (bool, string) {
		v := voters(t, leader)
		return len(v) == 3 && slices.Contains(v, mover.rpcAddr()) && !slices.Contains(v, old), fmt.Sprint(v)
	})
	tc.waitLeader(t, tc.servers, "")
	if err := registerJob(mover.client(t), "after-move"); err != nil {
		t.Fatalf("register through the moved server: %v", err)
	}
}

// snapshotRoundTrip: operator snapshot save, inspect, and restore after a
// job was purged bring the job back on every server.
func snapshotRoundTrip(t *testing.T, tc *testCluster) {
	s := tc.servers[0]
	file := filepath.Join(t.TempDir(), "backup.snap")
	if r := s.cli(t, "operator", "snapshot", "save", file); r.code != 0 || !strings.Contains(r.stdout, "State file written") {
		t.Fatalf("snapshot save: %s", r)
	}
	if r := s.cli(t, "operator", "snapshot", "inspect", file); r.code != 0 || !strings.Contains(r.stdout, "Jobs") {
		t.Fatalf("snapshot inspect: %s", r)
	}
	c := tc.servers[1].client(t)
	if _, _, err := c.Jobs().Deregister("after-move", true, nil); err != nil {
		t.Fatal(err)
	}
	if r := tc.clients[1].cli(t, "operator", "snapshot", "restore", file); r.code != 0 {
		t.Fatalf("snapshot restore through a client: %s", r)
	}
	for _, srv := range tc.servers {
		c := srv.client(t)
		waitFor(t, clusterWait, "the purged job back on "+srv.name, func() (bool, string) {
			j, _, err := c.Jobs().Info("after-move", &api.QueryOptions{AllowStale: true})
			if err != nil {
				return false, err.Error()
			}
			return j != nil, "no job"
		})
	}
	damaged := filepath.Join(t.TempDir(), "damaged.snap")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(damaged, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if r := s.cli(t, "operator", "snapshot", "restore", damaged); r.code == 0 || !strings.Contains(r.stderr, "corrupt") {
		t.Fatalf("restore of a damaged snapshot: %s", r)
	}
}

// freeze stops the server's process with SIGSTOP: to the others it is
// cut off.
func (s *clusterServer) freeze(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	s.stopped = true
}

// thaw resumes a frozen server.
func (s *clusterServer) thaw(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	s.stopped = false
}

// minorityRefusesWrites: with two of three servers frozen (a partition
// that leaves one server alone), the lone server accepts no write: it
// answers that there is no leader. Once the others are back, writes go
// through again.
func minorityRefusesWrites(t *testing.T, tc *testCluster) {
	leader := tc.waitLeader(t, tc.servers, "")
	var others []*clusterServer
	for _, s := range tc.servers {
		if s != leader {
			others = append(others, s)
		}
	}
	for _, s := range others {
		s.freeze(t)
	}
	c := leader.client(t)
	waitFor(t, clusterWait, "the lone server to refuse writes", func() (bool, string) {
		err := registerJob(c, "in-minority")
		var ue *api.UnexpectedResponseError
		if errors.As(err, &ue) && ue.StatusCode == http.StatusServiceUnavailable {
			return true, ""
		}
		return false, fmt.Sprintf("register = %v", err)
	})
	for _, s := range others {
		s.thaw(t)
	}
	tc.waitLeader(t, tc.servers, "")
	waitFor(t, clusterWait, "writes to go through again", func() (bool, string) {
		err := registerJob(c, "after-partition")
		return err == nil, fmt.Sprint(err)
	})
	if j, _, err := c.Jobs().Info("in-minority", nil); err == nil && j != nil {
		t.Logf("a registration answered 503 during the partition was committed once the partition healed (an ambiguous failure, as the 503 says): %s", *j.ID)
	}
}

// restartEveryServer: all three servers stop, then start again: a leader
// is elected, the state is intact, and the clients' nodes are ready.
func restartEveryServer(t *testing.T, tc *testCluster) {
	c := tc.servers[0].client(t)
	before, _, err := c.Jobs().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tc.servers {
		s.kill9(t)
	}
	for _, s := range tc.servers {
		s.start(t)
	}
	tc.waitLeader(t, tc.servers, "")
	waitFor(t, clusterWait, "every job back", func() (bool, string) {
		after, _, err := c.Jobs().List(nil)
		if err != nil {
			return false, err.Error()
		}
		return len(after) == len(before), fmt.Sprintf("%d jobs, %d before", len(after), len(before))
	})
	waitFor(t, clusterWait, "both nodes ready", func() (bool, string) {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, n := range nodes {
			if n.Status == api.NodeStatusReady {
				ready++
			}
		}
		return ready == 2, fmt.Sprintf("%d ready", ready)
	})
}

// duplicateServerName: a fourth server under an existing server's name
// does not start: its join is refused with an error naming the clash.
func duplicateServerName(t *testing.T, tc *testCluster) {
	dup := newClusterServer(t, tc.ports, "s1", 0, func() []string { return nil })
	cfg, err := os.ReadFile(dup.configPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.Replace(cfg, []byte("retry_join     = []"), []byte(fmt.Sprintf("start_join     = [%q]", tc.servers[1].serfAddr())), 1)
	if err := os.WriteFile(dup.configPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	dup.start(t)
	select {
	case <-dup.exited:
	case <-time.After(clusterWait):
		t.Fatalf("a server with a duplicate name kept running:\n%s", dup.output)
	}
	if out := dup.output.String(); !strings.Contains(out, "another server is named s1") {
		t.Fatalf("no clear error about the duplicate name:\n%s", out)
	}
}

// TestClusterRecover: two of three servers are lost for good (their data
// dirs gone). The survivor started with -recover leads alone with the
// whole state; a new server with an empty data dir joins it.
func TestClusterRecover(t *testing.T) {
	t.Parallel()
	ports := newPortSet()
	var servers []*clusterServer
	for i := range 3 {
		idx := i
		servers = append(servers, newClusterServer(t, ports, fmt.Sprintf("r%d", i+1), 3, func() []string {
			var out []string
			for j, o := range servers {
				if j != idx {
					out = append(out, o.serfAddr())
				}
			}
			return out
		}))
	}
	for _, s := range servers {
		s.writeConfig(t)
		s.start(t)
	}
	tc := &testCluster{servers: servers}
	tc.waitLeader(t, servers, "")
	if err := registerJob(servers[0].client(t), "kept"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, clusterWait, "r1 to hold the job", func() (bool, string) {
		j, _, err := servers[0].client(t).Jobs().Info("kept", &api.QueryOptions{AllowStale: true})
		return err == nil && j != nil, fmt.Sprint(err)
	})
	for _, s := range servers {
		s.kill9(t)
	}
	// r1 alone cannot elect a leader: two of its three voters are gone.
	r1 := servers[0]
	r1.join = func() []string { return nil }
	r1.writeConfig(t)
	r1.args = []string{"-recover"}
	r1.start(t)
	tc.waitLeader(t, []*clusterServer{r1}, "")
	if v := voters(t, r1); len(v) != 1 {
		t.Fatalf("voters after -recover: %v, want r1 alone", v)
	}
	if j, _, err := r1.client(t).Jobs().Info("kept", nil); err != nil || j == nil {
		t.Fatalf("the recovered server lost the job: %v", err)
	}
	if out := r1.sinceLastStart(); !strings.Contains(out, "recovered raft") {
		t.Errorf("no log line about the recovery:\n%s", out)
	}
	// A new server, empty, joins: bootstrap_expect 0 waits to be added.
	r4 := newClusterServer(t, ports, "r4", 0, func() []string { return []string{r1.serfAddr()} })
	r4.start(t)
	waitFor(t, clusterWait, "r4 to be a voter", func() (bool, string) {
		v := voters(t, r1)
		return len(v) == 2 && slices.Contains(v, r4.rpcAddr()), fmt.Sprint(v)
	})
	waitFor(t, clusterWait, "r4 to hold the job", func() (bool, string) {
		j, _, err := r4.client(t).Jobs().Info("kept", &api.QueryOptions{AllowStale: true})
		return err == nil && j != nil, fmt.Sprint(err)
	})
}

// TestClusterClientWithoutServer: a client whose servers all are
// unreachable starts, says clearly that no server answers and which
// addresses it tried, and keeps trying.
func TestClusterClientWithoutServer(t *testing.T) {
	t.Parallel()
	nowhere := "127.0.0.1:" + strconv.Itoa(freePort(t))
	c := newPersistentAgent(t, "lonely", roleClient, nowhere)
	c.start(t)
	waitFor(t, clusterWait, "the client to report that no server answers", func() (bool, string) {
		c.checkAlive(t)
		out := c.sinceLastStart()
		return strings.Contains(out, "no server reachable") && strings.Contains(out, nowhere), "not yet"
	})
	waitFor(t, clusterWait, "the client to serve its HTTP API all the same", func() (bool, string) {
		c.checkAlive(t)
		_, err := c.client(t).Agent().Self()
		return err == nil, fmt.Sprint(err)
	})
}

// TestClusterRefusesAnotherCluster: a server whose data dir belongs to
// another cluster is refused when it joins: its start fails with an error
// naming both clusters.
func TestClusterRefusesAnotherCluster(t *testing.T) {
	t.Parallel()
	ports := newPortSet()
	a := newClusterServer(t, ports, "a1", 1, func() []string { return nil })
	a.start(t)
	tc := &testCluster{}
	tc.waitLeader(t, []*clusterServer{a}, "")
	b := newClusterServer(t, ports, "b1", 1, func() []string { return nil })
	b.start(t)
	tc.waitLeader(t, []*clusterServer{b}, "")
	waitFor(t, clusterWait, "both clusters to gossip their IDs", func() (bool, string) {
		for _, s := range []*clusterServer{a, b} {
			nc, err := nomad.NewClient(&nomad.Config{Address: s.addr})
			if err != nil {
				t.Fatal(err)
			}
			mem, err := nc.Agent().Members()
			if err != nil || len(mem.Members) != 1 || mem.Members[0].Tags["cluster_id"] == "" {
				return false, fmt.Sprintf("%s: %+v %v", s.name, mem, err)
			}
		}
		return true, ""
	})
	b.interrupt(t)
	cfg, err := os.ReadFile(b.configPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.Replace(cfg, []byte("retry_join     = []"), []byte(fmt.Sprintf("start_join     = [%q]", a.serfAddr())), 1)
	if err := os.WriteFile(b.configPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	b.start(t)
	select {
	case <-b.exited:
	case <-time.After(clusterWait):
		t.Fatalf("a server of another cluster joined:\n%s", b.sinceLastStart())
	}
	if out := b.sinceLastStart(); !strings.Contains(out, "belongs to cluster") {
		t.Fatalf("no clear error about the other cluster:\n%s", out)
	}
	if v := voters(t, a); len(v) != 1 {
		t.Errorf("cluster a's voters: %v, want a1 alone", v)
	}
}
