// Command cluster measures scheduling throughput and write latency of a
// cluster of 1 or 3 servers, with many simulated clients.
//
// It starts the servers in process, each a real server of a cluster
// (rpcapi's wire and raft over TCP on its own loopback RPC port, serf on
// another, bootstrap_expect = the number of servers), registers -nodes
// simulated nodes (as clients do, over the RPC wire, spread over the
// servers), then registers -jobs jobs of -count allocations each, round
// robin over the servers (a follower forwards to the leader), and reports:
//
//   - placements/s: allocations placed (committed by the leader's plan
//     applier) per second, from the first registration until every
//     allocation is placed; with several servers, workers on every server
//     schedule (they take evaluations from the leader and submit plans to
//     it);
//   - write latency: the time of each job registration, which is one raft
//     commit (a majority of the servers wrote it) and the FSM's apply on the
//     leader, plus the forwarding for those sent to a follower (p50, p95,
//     p99);
//   - raft apply latency on the leader: the same, for node registrations
//     sent to the leader while no job is scheduled;
//   - with -timings (the default), each step's count, p50, p95 and total
//     time during the job phase, on the leader and on the followers: the
//     plan applier's queue wait, check (plan.evaluate) and raft entry
//     (plan.apply, one per batch of plans), each server's FSM apply of
//     plan results, and the workers' dequeue, wait for their state to
//     reach the index they need, scheduling, plan round trip and ack.
//
// -cpuprofile writes a CPU profile of the job phase; -commit-timeout sets
// raft's CommitTimeout (how soon an idle leader tells the followers the
// commit index; raft's default, as the agent).
//
// Usage (from the repository root):
//
//	go run ./bench/cluster -servers 1
//	go run ./bench/cluster -servers 3
//
// Where it sits in the data flow: outside the servers, in the place of the
// HTTP API and the clients (rpcapi calls over the RPC port).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

func main() {
	nServers := flag.Int("servers", 3, "servers in the cluster")
	nodes := flag.Int("nodes", 2000, "simulated client nodes")
	jobs := flag.Int("jobs", 200, "jobs to register")
	count := flag.Int("count", 50, "allocations per job")
	writers := flag.Int("writers", 8, "concurrent callers registering nodes and jobs")
	workers := flag.Int("workers", 0, "scheduler workers per server (0: one per core)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the job phase (registrations to the last placement) to this file")
	timings := flag.Bool("timings", true, "print the plan applier's and the workers' step timings")
	commitTimeout := flag.Duration("commit-timeout", raft.DefaultConfig().CommitTimeout,
		"raft's CommitTimeout: how soon an idle leader tells followers the commit index (the agent keeps raft's default)")
	flag.Parse()
	o := options{servers: *nServers, nodes: *nodes, jobs: *jobs, count: *count, writers: *writers,
		workers: *workers, cpuProfile: *cpuProfile, timings: *timings, commitTimeout: *commitTimeout}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	servers, nodes, jobs, count, writers, workers int
	cpuProfile                                    string
	timings                                       bool
	commitTimeout                                 time.Duration
}

// benchServer is one server with a client of its RPC port.
type benchServer struct {
	srv    *server.Server
	rpc    rpcapi.Conn
	serf   string
	timers *stepTimers
}

func run(o options) error {
	nServers, nodes, jobs, count, writers := o.servers, o.nodes, o.jobs, o.count, o.writers
	servers, err := startServers(nServers, o.workers, o.commitTimeout)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range servers {
			_ = s.srv.Shutdown()
		}
	}()
	ctx := context.Background()
	leader := waitLeader(servers)
	fmt.Printf("servers: %d (leader %s), nodes: %d, jobs: %d x %d allocations, writers: %d\n",
		nServers, leader.srv.Leader(), nodes, jobs, count, writers)

	// Nodes: registered through every server in turn; the time of those
	// sent to the leader is the raft apply latency with nothing else going.
	var leaderLat, nodeLat latencies
	err = parallel(nodes, writers, func(i int) error {
		s := servers[i%len(servers)]
		n := node(i)
		start := time.Now()
		if _, err := rpcapi.NodeRegister.Call(ctx, s.rpc, &structs.NodeRegisterRequest{Node: n}); err != nil {
			return fmt.Errorf("register node %d: %w", i, err)
		}
		d := time.Since(start)
		nodeLat.add(d)
		if s == leader {
			leaderLat.add(d)
		}
		return nil
	})
	if err != nil {
		return err
	}

	// Jobs: round robin over the servers; time until every allocation is
	// placed.
	var jobLat latencies
	want := jobs * count
	for _, s := range servers {
		s.timers.reset() // the job phase only
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	err = parallel(jobs, writers, func(i int) error {
		s := servers[i%len(servers)]
		t := time.Now()
		if _, err := rpcapi.JobRegister.Call(ctx, s.rpc, &structs.JobRegisterRequest{Job: job(i, count)}); err != nil {
			return fmt.Errorf("register job %d: %w", i, err)
		}
		jobLat.add(time.Since(t))
		return nil
	})
	if err != nil {
		return err
	}
	registered := time.Since(start)
	placed, err := waitPlaced(leader.srv, want, 10*time.Minute)
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	fmt.Printf("registered %d jobs in %s; %d allocations placed in %s: %.0f placements/s\n",
		jobs, registered.Round(time.Millisecond), placed, elapsed.Round(time.Millisecond), float64(placed)/elapsed.Seconds())
	fmt.Printf("job registration latency (raft commit + apply, forwarded from followers): %s\n", jobLat.summary())
	fmt.Printf("node registration latency, all servers: %s\n", nodeLat.summary())
	fmt.Printf("node registration latency, sent to the leader (raft apply): %s\n", leaderLat.summary())
	if o.timings {
		printTimings(servers, leader)
	}
	return nil
}

// startServers starts n servers that bootstrap together.
func startServers(n, workers int, commitTimeout time.Duration) ([]*benchServer, error) {
	var out []*benchServer
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		var join []string
		if i > 0 {
			join = []string{out[0].serf}
		}
		rc := raft.DefaultConfig()
		rc.CommitTimeout = commitTimeout
		timers := newStepTimers()
		cfg := &server.Config{
			NodeName: fmt.Sprintf("bench-%d", i+1), NumWorkers: workers, RaftConfig: rc, Timers: timers,
			HeartbeatTTL: time.Hour, // the simulated nodes do not heartbeat
			Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Cluster: &server.ClusterConfig{
				RPCListener: ln, SerfBind: "127.0.0.1:0", BootstrapExpect: n, StartJoin: join, Version: "bench",
			},
		}
		srv, err := server.NewServer(context.Background(), cfg)
		if err != nil {
			return nil, fmt.Errorf("start server %d: %w", i+1, err)
		}
		rc2, err := rpcclient.New(&rpcclient.Config{Servers: []string{srv.RPCAddr()}})
		if err != nil {
			return nil, err
		}
		out = append(out, &benchServer{srv: srv, rpc: rc2, serf: srv.SerfAddr(), timers: timers})
	}
	return out, nil
}

// waitLeader returns the server that leads once every server knows it.
func waitLeader(servers []*benchServer) *benchServer {
	for {
		for _, s := range servers {
			if s.srv.IsLeader() {
				ok := true
				for _, o := range servers {
					ok = ok && o.srv.Leader() == s.srv.RPCAddr()
				}
				if ok {
					return s
				}
			}
		}
		time.Sleep(50 * time.Millisecond) // a benchmark's poll, not a test's wait
	}
}

// waitPlaced waits until the leader's state holds want allocations to run.
func waitPlaced(s *server.Server, want int, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		scan := time.Now()
		allocs, err := s.State().Allocs(nil)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun {
				n++
			}
		}
		if n >= want {
			return n, nil
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("only %d of %d allocations placed after %s; evaluations: %s", n, want, limit, evalSummary(s))
		}
		// A benchmark's poll, not a test's wait: 20 ms, or four times
		// the count's own time, so that counting tens of thousands of
		// allocations takes no more than a fifth of a core from the run.
		time.Sleep(max(20*time.Millisecond, 4*time.Since(scan)))
	}
}

// evalSummary counts the leader's evaluations by status, for a run that
// did not place everything.
func evalSummary(s *server.Server) string {
	evals, err := s.State().Evals(nil)
	if err != nil {
		return err.Error()
	}
	by := map[string]int{}
	for _, e := range evals {
		k := e.Status
		if len(e.FailedTGAllocs) > 0 {
			k += " (with failed placements)"
		}
		by[k]++
	}
	return fmt.Sprint(by)
}

// parallel runs fn(0..n-1) on k goroutines; the first error wins.
func parallel(n, k int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func node(i int) *structs.Node {
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	return &structs.Node{
		ID: id, SecretID: "secret-" + id, Name: fmt.Sprintf("node-%d", i), Datacenter: "dc1",
		Status:     structs.NodeStatusReady,
		Attributes: map[string]string{"kernel.name": "linux"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
		},
		Drivers: map[string]*structs.DriverInfo{"mock": {Detected: true, Healthy: true}},
	}
}

func job(i, count int) *structs.Job {
	id := fmt.Sprintf("bench-%d", i)
	return &structs.Job{
		ID: id, Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name: "g", Count: count,
			Tasks: []*structs.Task{{
				Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"},
				Resources: &structs.Resources{CPU: 100, MemoryMB: 64},
			}},
		}},
	}
}

// latencies collects durations.
type latencies struct {
	mu sync.Mutex // guards d
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d = append(l.d, d)
}

// summary is "p50 X, p95 Y, p99 Z (n calls)".
func (l *latencies) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return "no calls"
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	q := func(p float64) time.Duration {
		return s[min(len(s)-1, int(p*float64(len(s))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("p50 %s, p95 %s, p99 %s (%d calls)", q(0.50), q(0.95), q(0.99), len(s))
}
