package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/drover-io/drover/structs"
)

// Placement quality: the sampling placer must place as well as a scan of
// every node for every placement, within the tolerances stated here, and
// spreads must meet their shares.

// Tolerances of the sampling placer against the exhaustive one.
const (
	// sampledScoreSlack: the sampled placements' mean bin-packing score
	// may be this much lower than the exhaustive ones' (scores are in
	// [0, 1], 1 for a full node).
	sampledScoreSlack = 0.05
	// sampledRankFloor: on average, a sampled placement's node must have
	// a better bin-packing score than this share of the nodes that could
	// have taken it.
	sampledRankFloor = 0.95
	// spreadSlack: a spread value's count must differ from its share by
	// less than this many allocations (12 or 13 for a share of 12.04).
	spreadSlack = 1.0
)

// qualityCluster returns a state of n nodes of mixed sizes in racks
// (meta.rack), most already running allocations of other jobs.
func qualityCluster(seed uint64, n, racks int) *fakeState {
	rng := rand.New(rand.NewPCG(seed, 7))
	st := newFakeState()
	other := newJob("other", structs.JobTypeService, 1, 100, 100)
	sizes := []struct{ cpu, mem int64 }{{2000, 4096}, {4000, 8192}, {8000, 16384}}
	for i := range n {
		node := newNode(fmt.Sprintf("node-%05d-%04x", i, rng.Uint32()&0xffff))
		size := sizes[rng.IntN(len(sizes))]
		node.NodeResources.Cpu.CpuShares, node.NodeResources.Memory.MemoryMB = size.cpu, size.mem
		node.Meta["rack"] = fmt.Sprintf("r%02d", i%racks)
		st.nodes = append(st.nodes, node)
		for k := range rng.IntN(4) {
			a := newAlloc(fmt.Sprintf("o-%d-%d", i, k), other, "web", 0, node.ID, structs.AllocClientStatusRunning)
			a.Resources = &structs.Resources{CPU: 100 + rng.IntN(int(size.cpu)/5), MemoryMB: 128 + rng.IntN(int(size.mem)/5)}
			st.allocs = append(st.allocs, a)
		}
	}
	return st
}

// indexedState wraps a fakeState with allocations indexed by node, so
// that large clusters stay quick to test.
type indexedState struct {
	*fakeState
	byNode map[string][]*structs.Allocation
}

func indexed(st *fakeState) *indexedState {
	s := &indexedState{fakeState: st, byNode: map[string][]*structs.Allocation{}}
	for _, a := range st.allocs {
		s.byNode[a.NodeID] = append(s.byNode[a.NodeID], a)
	}
	return s
}

func (s *indexedState) AllocsByNode(id string) ([]*structs.Allocation, error) {
	return s.byNode[id], nil
}

// outcome summarises a plan: the placements' nodes and mean bin-packing
// score, and the number of distinct nodes used.
type outcome struct {
	nodes     []string // by allocation index
	used      int
	meanScore float64
}

func summarize(t *testing.T, p *Plan, count int) outcome {
	t.Helper()
	o := outcome{nodes: make([]string, count)}
	used := map[string]bool{}
	var sum float64
	placed := 0
	for _, a := range p.Placements() {
		o.nodes[a.Index()] = a.NodeID
		used[a.NodeID] = true
		sum += a.Metrics.ScoreMetaData[0].Scores[structs.ScorerBinPack]
		placed++
	}
	if placed != count {
		t.Fatalf("placed %d of %d (failed: %+v)", placed, count, p.FailedTGAllocs)
	}
	o.used, o.meanScore = len(used), sum/float64(placed)
	return o
}

// naivePlacements is the reference placement: for each allocation, scan
// every ready node in the order of the evaluation's tie keys and take the
// first of the best bin-packing scores among those it fits on.
func naivePlacements(st *fakeState, evalID string, count int, ask *structs.Resources) []string {
	nodes := append([]*structs.Node(nil), st.nodes...)
	seed := tieSeed(evalID)
	sort.Slice(nodes, func(i, j int) bool {
		ki, kj := tieKey(seed, nodes[i].ID), tieKey(seed, nodes[j].ID)
		if ki != kj {
			return ki < kj
		}
		return nodes[i].ID < nodes[j].ID
	})
	used := map[string][2]int64{}
	for _, a := range st.allocs {
		u := used[a.NodeID]
		u[0] += int64(a.Resources.CPU)
		u[1] += int64(a.Resources.MemoryMB)
		used[a.NodeID] = u
	}
	var out []string
	for range count {
		best, bestScore := "", 0.0
		for _, n := range nodes {
			if !n.Ready() {
				continue
			}
			u := used[n.ID]
			cpuCap, memCap := nodeCapacity(n)
			cpu, mem := u[0]+int64(ask.CPU), u[1]+int64(ask.MemoryMB)
			if cpu > cpuCap || mem > memCap {
				continue
			}
			if s := binPackScore(cpu, cpuCap, mem, memCap); best == "" || s > bestScore {
				best, bestScore = n.ID, s
			}
		}
		if best == "" {
			return out
		}
		out = append(out, best)
		u := used[best]
		u[0] += int64(ask.CPU)
		u[1] += int64(ask.MemoryMB)
		used[best] = u
	}
	return out
}

// TestExhaustivePlacerMatchesNaiveScan: the placer's heaps, asked to
// consider every node, choose exactly what scanning every node for every
// placement chooses.
func TestExhaustivePlacerMatchesNaiveScan(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			st := qualityCluster(seed, 5+rng.IntN(40), 3)
			count, cpu, mem := 1+rng.IntN(60), 50+rng.IntN(900), 64+rng.IntN(2000)
			job := newJob("web", structs.JobTypeService, count, cpu, mem)
			st.jobs[job.NamespacedID()] = job
			opts := testOptions()
			opts.exhaustive = true
			eval := evalFor(job)
			plan, err := opts.Process(indexed(st), eval)
			if err != nil {
				t.Fatal(err)
			}
			want := naivePlacements(st, eval.ID, count, &structs.Resources{CPU: cpu, MemoryMB: mem})
			got := make([]string, 0, count)
			byIndex := map[int]string{}
			for _, a := range plan.Placements() {
				byIndex[a.Index()] = a.NodeID
			}
			for i := range len(byIndex) {
				got = append(got, byIndex[i])
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("placements differ from the naive scan\ngot  %v\nwant %v", got, want)
			}
		})
	}
}

// TestSampledPlacementQuality: on clusters of 2,000 nodes already partly
// used, each placement is ranked against every node that could have
// taken it at that point, by bin-packing score (the exhaustive scan's
// node beats them all: 100%). On average over a job, the sampled
// placements' nodes must beat at least sampledRankFloor of them, and the
// placements' mean bin-packing score be within sampledScoreSlack of the
// exhaustive scan's.
func TestSampledPlacementQuality(t *testing.T) {
	shapes := []struct{ count, cpu, mem int }{
		{1, 500, 512}, {10, 250, 256}, {100, 500, 1024}, {500, 100, 256}, {1200, 200, 300},
	}
	for seed := range uint64(2) {
		st := qualityCluster(100+seed, 2000, 25)
		for _, tc := range shapes {
			job := newJob("web", structs.JobTypeService, tc.count, tc.cpu, tc.mem)
			st.jobs = map[structs.NamespacedID]*structs.Job{job.NamespacedID(): job}
			ist := indexed(st)
			run := func(exhaustive bool) outcome {
				opts := testOptions()
				opts.exhaustive = exhaustive
				plan, err := opts.Process(ist, evalFor(job))
				if err != nil {
					t.Fatal(err)
				}
				return summarize(t, plan, tc.count)
			}
			ref, got := run(true), run(false)
			rank := meanRank(st, got.nodes, &structs.Resources{CPU: tc.cpu, MemoryMB: tc.mem})
			t.Logf("cluster %d, count %d: nodes better than %.2f%% of those that fit; mean bin-packing score %.3f (exhaustive %.3f) on %d nodes (exhaustive %d)",
				seed, tc.count, 100*rank, got.meanScore, ref.meanScore, got.used, ref.used)
			if rank < sampledRankFloor {
				t.Errorf("cluster %d, count %d: the sampled nodes are better than %.2f%% of the nodes that fit on average, want at least %.0f%%",
					seed, tc.count, 100*rank, 100*sampledRankFloor)
			}
			if gap := ref.meanScore - got.meanScore; gap > sampledScoreSlack {
				t.Errorf("cluster %d, count %d: sampling's mean bin-packing score %.3f is more than %.2f below the exhaustive scan's %.3f",
					seed, tc.count, got.meanScore, sampledScoreSlack, ref.meanScore)
			}
		}
	}
}

// meanRank replays placements (node IDs by allocation index) of ask on st
// and returns, averaged over the first 100 of them, the share of the nodes
// that could take each one whose bin-packing score is lower than the
// chosen node's.
func meanRank(st *fakeState, placements []string, ask *structs.Resources) float64 {
	used := map[string][2]int64{}
	for _, a := range st.allocs {
		u := used[a.NodeID]
		u[0] += int64(a.Resources.CPU)
		u[1] += int64(a.Resources.MemoryMB)
		used[a.NodeID] = u
	}
	score := func(n *structs.Node) (float64, bool) {
		u := used[n.ID]
		cpuCap, memCap := nodeCapacity(n)
		cpu, mem := u[0]+int64(ask.CPU), u[1]+int64(ask.MemoryMB)
		if cpu > cpuCap || mem > memCap {
			return 0, false
		}
		return binPackScore(cpu, cpuCap, mem, memCap), true
	}
	byID := map[string]*structs.Node{}
	for _, n := range st.nodes {
		byID[n.ID] = n
	}
	placements = placements[:min(len(placements), 100)]
	var sum float64
	for _, id := range placements {
		chosen := byID[id]
		cs, _ := score(chosen)
		worse, fit := 0, 0
		for _, n := range st.nodes {
			if s, ok := score(n); ok {
				fit++
				if s < cs {
					worse++
				}
			}
		}
		if fit > 1 {
			sum += float64(worse) / float64(fit-1)
		} else {
			sum++
		}
		u := used[id]
		u[0] += int64(ask.CPU)
		u[1] += int64(ask.MemoryMB)
		used[id] = u
	}
	return sum / float64(len(placements))
}

// TestSpreadQuality: on 1,000 partly used nodes in 25 racks, a spread's
// shares are met within spreadSlack allocations per value, even and with
// targets (the racks no target names sharing the rest evenly), and
// bin-packing still packs within each rack.
func TestSpreadQuality(t *testing.T) {
	st := qualityCluster(7, 1000, 25)
	for _, tc := range []struct {
		name    string
		count   int
		targets []*structs.SpreadTarget
		want    func(rack string, count int) float64 // desired count
	}{
		{name: "even", count: 1200, want: func(_ string, count int) float64 { return float64(count) / 25 }},
		{name: "even, fractional shares", count: 301, want: func(_ string, count int) float64 { return float64(count) / 25 }},
		{name: "targets", count: 1000, targets: []*structs.SpreadTarget{{Value: "r00", Percent: 30}, {Value: "r01", Percent: 20}},
			want: func(rack string, count int) float64 {
				switch rack {
				case "r00":
					return 0.3 * float64(count)
				case "r01":
					return 0.2 * float64(count)
				}
				return 0.5 * float64(count) / 23 // the other 23 racks share 50%
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := newJob("web", structs.JobTypeService, tc.count, 100, 256)
			job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50, SpreadTarget: tc.targets}}
			st.jobs = map[structs.NamespacedID]*structs.Job{job.NamespacedID(): job}
			ist := indexed(st)
			plan, err := testOptions().Process(ist, evalFor(job))
			if err != nil {
				t.Fatal(err)
			}
			o := summarize(t, plan, tc.count)
			byRack := map[string]int{}
			nodesByRack := map[string]map[string]bool{}
			for _, a := range plan.Placements() {
				n, _ := st.NodeByID(a.NodeID)
				rack := n.Meta["rack"]
				byRack[rack]++
				if nodesByRack[rack] == nil {
					nodesByRack[rack] = map[string]bool{}
				}
				nodesByRack[rack][n.ID] = true
			}
			for r := range 25 {
				rack := fmt.Sprintf("r%02d", r)
				want := tc.want(rack, tc.count)
				if d := math.Abs(float64(byRack[rack]) - want); d >= spreadSlack {
					t.Errorf("rack %s has %d allocations, its share is %.2f", rack, byRack[rack], want)
				}
			}
			// Bin-packing within racks: a rack's allocations use about as
			// few nodes as their size allows (8 GiB nodes hold 32 at most).
			for rack, nodes := range nodesByRack {
				if limit := byRack[rack]/8 + 2; len(nodes) > limit {
					t.Errorf("rack %s spreads %d allocations over %d nodes (more than %d)", rack, byRack[rack], len(nodes), limit)
				}
			}
			t.Logf("%d placements on %d nodes, mean bin-packing score %.3f; by rack %v", tc.count, o.used, o.meanScore, byRack)
		})
	}
}
