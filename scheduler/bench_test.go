package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// The scheduler benchmark: one evaluation per iteration, placing a whole
// job on a simulated cluster held in memory (no raft, no network), in the
// shapes of Nomad's scheduler benchmark. Results and the command are in
// docs/performance.md.
//
//	go test -run '^$' -bench Placement -benchtime 5x ./scheduler/

// processCPU returns the CPU time (user and system) the process used so
// far, garbage collection included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchState is an indexed in-memory State, as the server's state store
// is: allocations by node and by job.
type benchState struct {
	job    *structs.Job
	nodes  []*structs.Node
	byID   map[string]*structs.Node
	byNode map[string][]*structs.Allocation
}

func (s *benchState) JobByID(ns, id string) (*structs.Job, error) {
	if s.job.Namespace == ns && s.job.ID == id {
		return s.job, nil
	}
	return nil, nil
}
func (s *benchState) AllocsByJob(string, string) ([]*structs.Allocation, error) { return nil, nil }
func (s *benchState) AllocsByNode(id string) ([]*structs.Allocation, error) {
	return s.byNode[id], nil
}
func (s *benchState) NodeByID(id string) (*structs.Node, error) { return s.byID[id], nil }
func (s *benchState) ReadyNodes() ([]*structs.Node, error)      { return s.nodes, nil }
func (s *benchState) SchedulerConfig() (*structs.SchedulerConfiguration, error) {
	return nil, nil
}
func (s *benchState) LatestDeployment(string, string) (*structs.Deployment, error) { return nil, nil }

// benchShape is one cluster and job.
type benchShape struct {
	nodes, racks, allocs int
	variant              string // binpack, spread, spread-targets, constraint, affinity, devices, pool
}

func (s benchShape) String() string {
	return fmt.Sprintf("nodes=%d/racks=%d/allocs=%d/%s", s.nodes, s.racks, s.allocs, s.variant)
}

// benchCluster builds the cluster of a shape: nodes of 4000 MHz and 8 GiB
// in racks (meta.rack, attr.platform.rack), half of them already running
// an allocation of another job of random size, a fifth of class "small";
// with the devices variant each node has four GPUs.
func benchCluster(shape benchShape) *benchState {
	rng := rand.New(rand.NewPCG(1, uint64(shape.nodes)))
	st := &benchState{byID: map[string]*structs.Node{}, byNode: map[string][]*structs.Allocation{}}
	other := newJob("other", structs.JobTypeService, 1, 100, 100)
	for i := range shape.nodes {
		id := fmt.Sprintf("%08x-%04x-node", rng.Uint32(), i)
		rack := fmt.Sprintf("r%02d", i%shape.racks)
		n := &structs.Node{
			ID: id, Name: fmt.Sprintf("node-%d", i), Datacenter: "dc1", Status: structs.NodeStatusReady,
			SchedulingEligibility: structs.NodeSchedulingEligible, NodePool: "default",
			Attributes: map[string]string{
				"kernel.name": "linux", "cpu.arch": "amd64", "os.version": "6.1.0", "driver.mock": "1",
				"platform.rack": rack, "unique.hostname": fmt.Sprintf("host-%d", i),
			},
			Meta: map[string]string{"rack": rack},
			NodeResources: &structs.NodeResources{
				Cpu:    structs.NodeCpuResources{CpuShares: 4000},
				Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			},
			Drivers: map[string]*structs.DriverInfo{"mock": {Detected: true, Healthy: true}},
		}
		if i%5 == 0 {
			n.NodeClass = "small"
		}
		if shape.variant == "pool" && i%2 == 1 {
			n.NodePool = "other" // half the cluster is out of the job's pool
		}
		if shape.variant == "devices" {
			n.NodeResources.Devices = []*structs.NodeDeviceResource{
				gpuGroup("nvidia/gpu/t4", []string{id + "-g0", id + "-g1", id + "-g2", id + "-g3"}, "memory=16 GiB"),
			}
		}
		n.ComputedClass = n.ComputeClass() // as the state store does
		st.nodes = append(st.nodes, n)
		st.byID[id] = n
		if i%2 == 0 {
			a := newAlloc(fmt.Sprintf("other-%d", i), other, "web", 0, id, structs.AllocClientStatusRunning)
			a.Resources = &structs.Resources{CPU: 500 + rng.IntN(1500), MemoryMB: 1024 + rng.IntN(3072)}
			st.byNode[id] = append(st.byNode[id], a)
		}
	}
	// The state store lists nodes by ID.
	slices.SortFunc(st.nodes, func(a, b *structs.Node) int { return strings.Compare(a.ID, b.ID) })
	job := newJob("bench", structs.JobTypeService, shape.allocs, 100, 256)
	tg := job.TaskGroups[0]
	switch shape.variant {
	case "spread":
		tg.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
	case "spread-targets":
		// Two thirds in rack r00, the rest over the others; and as
		// many on small nodes as elsewhere, from a job-level spread.
		tg.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100,
			SpreadTarget: []*structs.SpreadTarget{{Value: "r00", Percent: 66}}}}
		job.Spreads = []*structs.Spread{{Attribute: "${node.class}", Weight: 50}}
	case "constraint":
		job.Constraints = []*structs.Constraint{
			{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"},
			{LTarget: "${attr.os.version}", Operand: "version", RTarget: ">= 5.10"},
		}
		tg.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: "regexp", RTarget: "[02468]$"}}
	case "affinity":
		tg.Affinities = []*structs.Affinity{
			{LTarget: "${meta.rack}", Operand: "=", RTarget: "r01", Weight: 50},
			{LTarget: "${node.class}", Operand: "=", RTarget: "small", Weight: -30},
		}
	case "devices":
		tg.Tasks[0].Resources.Devices = []*structs.RequestedDevice{{Name: "nvidia/gpu", Count: 1,
			Constraints: []*structs.Constraint{{LTarget: "${device.attr.memory}", Operand: ">=", RTarget: "8 GiB"}}}}
	}
	st.job = job
	return st
}

func benchShapes() []benchShape {
	var out []benchShape
	for _, n := range []int{500, 1000, 5000, 10000} {
		for _, v := range []string{"binpack", "spread"} {
			out = append(out, benchShape{n, 25, 1200, v})
		}
	}
	for _, racks := range []int{50, 75} {
		out = append(out, benchShape{5000, racks, 1200, "spread"})
	}
	for _, n := range []int{5000, 10000} {
		for _, v := range []string{"binpack", "spread"} {
			out = append(out, benchShape{n, 25, 50, v})
		}
	}
	for _, v := range []string{"constraint", "affinity", "devices", "spread-targets", "pool"} {
		out = append(out, benchShape{5000, 25, 1200, v})
	}
	// Issue 17's shape: a job spread over 100 nodes.
	for _, v := range []string{"spread", "spread-targets"} {
		out = append(out, benchShape{100, 10, 100, v})
	}
	return out
}

// BenchmarkPlacement processes one evaluation per iteration and reports
// placements per second and allocations placed per evaluation; B/op is
// the memory one evaluation allocates.
func BenchmarkPlacement(b *testing.B) {
	for _, shape := range benchShapes() {
		b.Run(shape.String(), func(b *testing.B) {
			st := benchCluster(shape)
			eval := evalFor(st.job)
			n := 0
			opts := Options{Now: func() time.Time { return time.Unix(1700000000, 0) },
				NewID: func() string { n++; return fmt.Sprintf("alloc-%d", n) }}
			b.ReportAllocs()
			b.ResetTimer()
			placed := 0
			cpu0 := processCPU()
			for b.Loop() {
				plan, err := opts.Process(st, eval)
				if err != nil {
					b.Fatal(err)
				}
				placed = 0
				for _, as := range plan.NodeAllocation {
					placed += len(as)
				}
				if placed != shape.allocs {
					b.Fatalf("placed %d of %d (failed: %v)", placed, shape.allocs, plan.FailedTGAllocs)
				}
			}
			cpu := (processCPU() - cpu0) / time.Duration(b.N)
			b.ReportMetric(float64(placed), "allocs/eval")
			b.ReportMetric(float64(placed*b.N)/b.Elapsed().Seconds(), "placements/s")
			// CPU time is what a loaded machine does not distort: wall
			// time there includes waiting for a core.
			b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/eval")
		})
	}
}
