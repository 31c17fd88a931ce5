package scheduler

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// netNode returns a node whose default host network is ip, with a dynamic
// port range [lo, hi] (0: the defaults) and the given reserved ports.
func netNode(id, ip string, lo, hi int, reserved string) *structs.Node {
	n := newNode(id)
	n.NodeResources.Cpu.CpuShares = 1_000_000
	n.NodeResources.Memory.MemoryMB = 1_000_000
	n.NodeResources.NodeNetworks = []*structs.NodeNetworkResource{{Mode: "host", Device: "eth0",
		Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: "default", Address: ip}}}}
	n.NodeResources.MinDynamicPort, n.NodeResources.MaxDynamicPort = lo, hi
	n.ReservedResources = &structs.NodeReservedResources{Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: reserved}}
	return n
}

// withHostNetwork adds an interface whose address ip belongs to host
// network name, with reserved ports.
func withHostNetwork(n *structs.Node, name, ip, reserved string) *structs.Node {
	n.NodeResources.NodeNetworks = append(n.NodeResources.NodeNetworks, &structs.NodeNetworkResource{Mode: "host", Device: "eth1",
		Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: name, Address: ip, ReservedPorts: reserved}}})
	return n
}

// portJob asks for the group ports ports, "label" (dynamic), "label=N"
// (static), "label>T" (dynamic mapped to T), "label@net" (on a host
// network), in a job of count allocations.
func portJob(id string, count int, ports ...string) *structs.Job {
	j := newJob(id, "service", count, 10, 10)
	n := &structs.NetworkResource{}
	for _, spec := range ports {
		p := structs.Port{}
		spec, p.HostNetwork, _ = strings.Cut(spec, "@")
		spec, to, hasTo := strings.Cut(spec, ">")
		if hasTo {
			p.To = atoi(to)
		}
		label, static, isStatic := strings.Cut(spec, "=")
		p.Label = label
		if isStatic {
			p.Value = atoi(static)
			n.ReservedPorts = append(n.ReservedPorts, p)
		} else {
			n.DynamicPorts = append(n.DynamicPorts, p)
		}
	}
	j.TaskGroups[0].Networks = []*structs.NetworkResource{n}
	return j
}

// holdingPorts returns a running alloc of another job holding ports
// ("label=ip:port") through AllocatedSharedResources.Ports.
func holdingPorts(id, node string, ports ...string) *structs.Allocation {
	a := newAlloc(id, newJob("other-"+id, "service", 1, 10, 10), "web", 0, node, "running")
	a.AllocatedResources = &structs.AllocatedResources{}
	for _, p := range ports {
		label, addr, _ := strings.Cut(p, "=")
		ip, port, _ := strings.Cut(addr, ":")
		a.AllocatedResources.Shared.Ports = append(a.AllocatedResources.Shared.Ports, structs.AllocatedPortMapping{Label: label, HostIP: ip, Value: atoi(port)})
	}
	return a
}

// renderPorts renders each placement's node and ports:
// "a:http=10.0.0.1:20001>80".
func renderPorts(allocs []*structs.Allocation) string {
	var out []string
	for _, a := range allocs {
		s := a.NodeID + ":"
		var ps []string
		for _, p := range a.AllocatedResources.Shared.Ports {
			m := fmt.Sprintf("%s=%s:%d", p.Label, p.HostIP, p.Value)
			if p.To != 0 {
				m += fmt.Sprintf(">%d", p.To)
			}
			ps = append(ps, m)
		}
		out = append(out, s+strings.Join(ps, ","))
	}
	return strings.Join(out, " ")
}

func TestPortPlacement(t *testing.T) {
	tests := []struct {
		name       string
		nodes      []*structs.Node
		allocs     []*structs.Allocation
		job        *structs.Job
		want       string // renderPorts of the placements
		wantFilter string
		wantDim    string
	}{
		{
			name:  "static port on the default address",
			nodes: []*structs.Node{netNode("a", "10.0.0.1", 0, 0, "")},
			job:   portJob("web", 1, "http=8080"),
			want:  "a:http=10.0.0.1:8080",
		},
		{
			name:  "dynamic port from a one-port range keeps to",
			nodes: []*structs.Node{netNode("a", "10.0.0.1", 25000, 25000, "")},
			job:   portJob("web", 1, "db>6379"),
			want:  "a:db=10.0.0.1:25000>6379",
		},
		{
			name:    "static port taken by another allocation",
			nodes:   []*structs.Node{netNode("a", "10.0.0.1", 0, 0, "")},
			allocs:  []*structs.Allocation{holdingPorts("o1", "a", "web=10.0.0.1:8080")},
			job:     portJob("web", 1, "http=8080"),
			wantDim: "network: port collision http=8080",
		},
		{
			name:   "static port taken on another address is free here",
			nodes:  []*structs.Node{netNode("a", "10.0.0.1", 0, 0, "")},
			allocs: []*structs.Allocation{holdingPorts("o1", "a", "web=10.0.0.2:8080")},
			job:    portJob("web", 1, "http=8080"),
			want:   "a:http=10.0.0.1:8080",
		},
		{
			name:    "static port reserved by the client",
			nodes:   []*structs.Node{netNode("a", "10.0.0.1", 0, 0, "22,8000-8100")},
			job:     portJob("web", 1, "http=8080"),
			wantDim: "network: port collision http=8080",
		},
		{
			name:   "the other node takes the collision",
			nodes:  []*structs.Node{netNode("a", "10.0.0.1", 0, 0, ""), netNode("b", "10.0.0.2", 0, 0, "")},
			allocs: []*structs.Allocation{holdingPorts("o1", "a", "web=10.0.0.1:8080")},
			job:    portJob("web", 1, "http=8080"),
			want:   "b:http=10.0.0.2:8080",
		},
		{
			name:    "two allocations of one group cannot share a static port on one node",
			nodes:   []*structs.Node{netNode("a", "10.0.0.1", 0, 0, "")},
			job:     portJob("web", 2, "http=8080"),
			want:    "a:http=10.0.0.1:8080",
			wantDim: "network: port collision http=8080",
		},
		{
			name:   "dynamic ports skip used and reserved ones",
			nodes:  []*structs.Node{netNode("a", "10.0.0.1", 20000, 20003, "20000,20002")},
			allocs: []*structs.Allocation{holdingPorts("o1", "a", "x=10.0.0.1:20001")},
			job:    portJob("web", 1, "http"),
			want:   "a:http=10.0.0.1:20003",
		},
		{
			name:    "dynamic range exhausted",
			nodes:   []*structs.Node{netNode("a", "10.0.0.1", 20000, 20001, "")},
			job:     portJob("web", 1, "a", "b", "c"),
			wantDim: "network: dynamic port selection failed",
		},
		{
			name:  "a dynamic pick never takes a static port of the same group",
			nodes: []*structs.Node{netNode("a", "10.0.0.1", 20000, 20001, "")},
			job:   portJob("web", 1, "dyn", "fixed=20000"),
			want:  "a:fixed=10.0.0.1:20000,dyn=10.0.0.1:20001",
		},
		{
			name:  "host network address",
			nodes: []*structs.Node{withHostNetwork(netNode("a", "10.0.0.1", 0, 0, ""), "public", "192.0.2.10", "")},
			job:   portJob("web", 1, "http=80@public", "admin=80"),
			want:  "a:http=192.0.2.10:80,admin=10.0.0.1:80",
		},
		{
			name:    "host network reserved ports",
			nodes:   []*structs.Node{withHostNetwork(netNode("a", "10.0.0.1", 0, 0, ""), "public", "192.0.2.10", "80,443")},
			job:     portJob("web", 1, "http=80@public"),
			wantDim: "network: port collision http=80",
		},
		{
			name:       "missing host network filters the node",
			nodes:      []*structs.Node{netNode("a", "10.0.0.1", 0, 0, "")},
			job:        portJob("web", 1, "http@public"),
			wantFilter: `missing host network "public"`,
		},
		{
			name: "node without interfaces uses its address attribute",
			nodes: []*structs.Node{func() *structs.Node {
				n := newNode("a")
				n.Attributes["unique.network.ip-address"] = "127.0.0.1"
				return n
			}()},
			job:  portJob("web", 1, "http=8080"),
			want: "a:http=127.0.0.1:8080",
		},
		{
			name:       "node without any address",
			nodes:      []*structs.Node{newNode("a")},
			job:        portJob("web", 1, "http"),
			wantFilter: `missing host network "default"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeState()
			st.nodes = tt.nodes
			st.allocs = tt.allocs
			st.jobs[tt.job.NamespacedID()] = tt.job
			plan, err := testOptions().Process(st, evalFor(tt.job))
			if err != nil {
				t.Fatal(err)
			}
			if got := renderPorts(plan.Placements()); got != tt.want {
				t.Errorf("placements = %q, want %q\n%s", got, tt.want, renderPlan(plan))
			}
			m := plan.FailedTGAllocs["web"]
			if tt.wantFilter != "" && (m == nil || m.ConstraintFiltered[tt.wantFilter] == 0) {
				t.Errorf("want %q filtered, got %+v", tt.wantFilter, m)
			}
			if tt.wantDim != "" && (m == nil || m.DimensionExhausted[tt.wantDim] == 0) {
				t.Errorf("want %q exhausted, got %+v", tt.wantDim, m)
			}
			if tt.wantFilter == "" && tt.wantDim == "" && m != nil {
				t.Errorf("unexpected failure %+v", m)
			}
			for _, a := range plan.Placements() {
				if fit, reason := PortsFit(append(st.allocs, plan.Placements()...)); !fit {
					t.Errorf("plan does not pass PortsFit: %s (alloc %s)", reason, a.ID)
				}
			}
		})
	}
}

// The group's network as placed: its block with values and IP, and the
// task-level blocks of older jobs on their tasks.
func TestPortPlacementNetworks(t *testing.T) {
	job := portJob("web", 1, "http>80", "admin=9000")
	job.TaskGroups[0].Tasks[0].Resources.Networks = []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "rpc"}}}}
	st := newFakeState()
	st.nodes = []*structs.Node{netNode("a", "10.0.0.1", 21000, 21001, "")}
	st.jobs[job.NamespacedID()] = job
	plan, err := testOptions().Process(st, evalFor(job))
	if err != nil {
		t.Fatal(err)
	}
	ps := plan.Placements()
	if len(ps) != 1 {
		t.Fatalf("placements: %s", renderPlan(plan))
	}
	ar := ps[0].AllocatedResources
	shared := ar.Shared.Networks
	if len(shared) != 1 || shared[0].IP != "10.0.0.1" || shared[0].ReservedPorts[0].Value != 9000 ||
		shared[0].DynamicPorts[0].Value < 21000 || shared[0].DynamicPorts[0].To != 80 {
		t.Errorf("shared networks = %s", mustRender(shared))
	}
	task := ar.Tasks["app"].Networks
	if len(task) != 1 || task[0].IP != "10.0.0.1" || len(task[0].DynamicPorts) != 1 {
		t.Fatalf("task networks = %s", mustRender(task))
	}
	if task[0].DynamicPorts[0].Value == shared[0].DynamicPorts[0].Value {
		t.Errorf("task port and group port share %d", task[0].DynamicPorts[0].Value)
	}
	if _, ok := ar.Shared.Ports.Get("rpc"); ok {
		t.Error("a task-level port is in the group's port mappings")
	}
	// A task-level port counts as used for the next placement.
	used := usedPorts(ps)
	if !used.has("10.0.0.1", task[0].DynamicPorts[0].Value) || !used.has("10.0.0.1", 9000) {
		t.Errorf("used ports %v miss the placement's", used)
	}
}

func mustRender(v any) string { return fmt.Sprintf("%+v", v) }

// A burst of 1,000 placements on one node gets 1,000 distinct dynamic
// ports of the range, and the same random source gives the same ports.
func TestDynamicPortsBurstOnOneNode(t *testing.T) {
	run := func(seed uint64) []*structs.Allocation {
		job := portJob("burst", 1000, "http")
		st := newFakeState()
		st.nodes = []*structs.Node{netNode("a", "10.0.0.1", 20000, 21500, "20100-20199")}
		st.allocs = []*structs.Allocation{holdingPorts("o1", "a", "x=10.0.0.1:20500", "y=10.0.0.1:20501")}
		st.jobs[job.NamespacedID()] = job
		opts := testOptions()
		opts.Rand = rand.New(rand.NewPCG(seed, seed))
		plan, err := opts.Process(st, evalFor(job))
		if err != nil {
			t.Fatal(err)
		}
		if f := plan.FailedTGAllocs["web"]; f != nil {
			t.Fatalf("failed placements: %+v", f)
		}
		if fit, reason := PortsFit(append(st.allocs, plan.Placements()...)); !fit {
			t.Fatalf("PortsFit: %s", reason)
		}
		return plan.Placements()
	}
	first := run(1)
	if len(first) != 1000 {
		t.Fatalf("%d placements, want 1000", len(first))
	}
	seen := map[int]bool{}
	for _, a := range first {
		p := a.AllocatedResources.Shared.Ports[0].Value
		switch {
		case p < 20000 || p > 21500:
			t.Errorf("%s: port %d outside the range", a.Name, p)
		case p >= 20100 && p <= 20199:
			t.Errorf("%s: reserved port %d", a.Name, p)
		case p == 20500 || p == 20501:
			t.Errorf("%s: port %d held by another allocation", a.Name, p)
		case seen[p]:
			t.Errorf("%s: port %d given twice", a.Name, p)
		}
		seen[p] = true
	}
	again := run(1)
	for i := range first {
		if first[i].AllocatedResources.Shared.Ports[0] != again[i].AllocatedResources.Shared.Ports[0] {
			t.Fatalf("placement %d: %v then %v with the same seed", i, first[i].AllocatedResources.Shared.Ports[0], again[i].AllocatedResources.Shared.Ports[0])
		}
	}
	other := run(2)
	same := 0
	for i := range first {
		if first[i].AllocatedResources.Shared.Ports[0] == other[i].AllocatedResources.Shared.Ports[0] {
			same++
		}
	}
	if same == len(first) {
		t.Error("another seed picked the very same ports: the random source is not used")
	}
}

func TestPortsFit(t *testing.T) {
	ignore := holdingPorts("3", "a", "z=10.0.0.1:80")
	ignore.AllocatedResources.Shared.Ports[0].IgnoreCollision = true
	tests := []struct {
		name   string
		allocs []*structs.Allocation
		want   string
	}{
		{"distinct", []*structs.Allocation{holdingPorts("1", "a", "x=10.0.0.1:80"), holdingPorts("2", "a", "y=10.0.0.1:81")}, ""},
		{"other address", []*structs.Allocation{holdingPorts("1", "a", "x=10.0.0.1:80"), holdingPorts("2", "a", "y=10.0.0.2:80")}, ""},
		{"twice", []*structs.Allocation{holdingPorts("1", "a", "x=10.0.0.1:80"), holdingPorts("2", "a", "y=10.0.0.1:80")}, "network: port collision y=80"},
		{"ignore_collision", []*structs.Allocation{holdingPorts("1", "a", "x=10.0.0.1:80"), ignore}, ""},
	}
	for _, tt := range tests {
		fit, reason := PortsFit(tt.allocs)
		if fit != (tt.want == "") || reason != tt.want {
			t.Errorf("%s: PortsFit = %v, %q; want %q", tt.name, fit, reason, tt.want)
		}
	}
}

func TestIgnoreCollisionSharesAStaticPort(t *testing.T) {
	job := portJob("web", 2, "http=8080")
	job.TaskGroups[0].Networks[0].ReservedPorts[0].IgnoreCollision = true
	st := newFakeState()
	st.nodes = []*structs.Node{netNode("a", "10.0.0.1", 0, 0, "")}
	st.jobs[job.NamespacedID()] = job
	plan, err := testOptions().Process(st, evalFor(job))
	if err != nil {
		t.Fatal(err)
	}
	if got := renderPorts(plan.Placements()); got != "a:http=10.0.0.1:8080 a:http=10.0.0.1:8080" {
		t.Fatalf("placements = %q\n%s", got, renderPlan(plan))
	}
}

// BenchmarkDynamicPorts1000OnOneNode places 1,000 allocations with a
// dynamic port each on one node (docs/performance.md).
func BenchmarkDynamicPorts1000OnOneNode(b *testing.B) {
	job := portJob("burst", 1000, "http")
	st := newFakeState()
	st.nodes = []*structs.Node{netNode("a", "10.0.0.1", 20000, 32000, "")}
	st.jobs[job.NamespacedID()] = job
	for b.Loop() {
		plan, err := testOptions().Process(st, evalFor(job))
		if err != nil || len(plan.Placements()) != 1000 {
			b.Fatalf("%d placements, %v", len(plan.Placements()), err)
		}
	}
}

// BenchmarkNoPorts1000OnOneNode is the same placements without ports, the
// baseline of BenchmarkDynamicPorts1000OnOneNode.
func BenchmarkNoPorts1000OnOneNode(b *testing.B) {
	job := newJob("burst", "service", 1000, 10, 10)
	st := newFakeState()
	st.nodes = []*structs.Node{netNode("a", "10.0.0.1", 20000, 32000, "")}
	st.jobs[job.NamespacedID()] = job
	for b.Loop() {
		plan, err := testOptions().Process(st, evalFor(job))
		if err != nil || len(plan.Placements()) != 1000 {
			b.Fatalf("%d placements, %v", len(plan.Placements()), err)
		}
	}
}
