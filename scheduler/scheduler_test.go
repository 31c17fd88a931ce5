package scheduler

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestProcess(t *testing.T) {
	type want struct {
		placed, stopped int
		placedOn        []string // nodes of placements, in Placements order
		failedDim       string   // a dimension expected in FailedTGAllocs["web"]
		failedFilter    string   // a ConstraintFiltered key expected
		queued          int
	}
	withNodes := func(st *fakeState, nodes ...*structs.Node) { st.nodes = append(st.nodes, nodes...) }
	tests := []struct {
		name  string
		setup func(st *fakeState) *structs.Job
		want  want
	}{
		{
			name: "bin-packing prefers the fuller node",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"), newNode("b"))
				other := newJob("other", "service", 1, 600, 600)
				st.allocs = append(st.allocs, newAlloc("o1", other, "web", 0, "b", "running"))
				return newJob("web", "service", 1, 300, 300)
			},
			want: want{placed: 1, placedOn: []string{"b"}},
		},
		{
			name: "cpu exhaustion is reported",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"))
				return newJob("web", "service", 2, 600, 100)
			},
			want: want{placed: 1, failedDim: "cpu", queued: 1},
		},
		{
			name: "memory exhaustion is reported",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"))
				return newJob("web", "service", 1, 100, 2000)
			},
			want: want{failedDim: "memory", queued: 1},
		},
		{
			name: "constraint filters nodes",
			setup: func(st *fakeState) *structs.Job {
				n := newNode("a")
				n.Attributes["kernel.name"] = "windows"
				withNodes(st, n, newNode("b"))
				j := newJob("web", "service", 1, 100, 100)
				j.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
				return j
			},
			want: want{placed: 1, placedOn: []string{"b"}},
		},
		{
			name: "unsatisfiable constraint is reported",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"))
				j := newJob("web", "service", 1, 100, 100)
				j.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${node.datacenter}", Operand: "=", RTarget: "dc9"}}
				return j
			},
			want: want{failedFilter: "${node.datacenter} = dc9", queued: 1},
		},
		{
			name: "job stop stops all",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"))
				j := newJob("web", "service", 2, 100, 100)
				j.Stop = true
				st.allocs = append(st.allocs, newAlloc("a0", j, "web", 0, "a", "running"), newAlloc("a1", j, "web", 1, "a", "pending"))
				return j
			},
			want: want{stopped: 2},
		},
		{
			name: "count decrease stops highest index",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"))
				j := newJob("web", "service", 1, 100, 100)
				st.allocs = append(st.allocs, newAlloc("a1", j, "web", 1, "a", "running"), newAlloc("a0", j, "web", 0, "a", "running"))
				return j
			},
			want: want{stopped: 1},
		},
		{
			name: "batch completed is not replaced",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"))
				j := newJob("b", "batch", 1, 100, 100)
				st.allocs = append(st.allocs, newAlloc("a0", j, "web", 0, "a", "complete"))
				return j
			},
			want: want{},
		},
		{
			name: "lost is replaced elsewhere",
			setup: func(st *fakeState) *structs.Job {
				down := newNode("a")
				down.Status = structs.NodeStatusDown
				withNodes(st, down, newNode("b"))
				j := newJob("web", "service", 1, 100, 100)
				st.allocs = append(st.allocs, newAlloc("a0", j, "web", 0, "a", "lost"))
				return j
			},
			want: want{placed: 1, stopped: 1, placedOn: []string{"b"}},
		},
		{
			name: "system job one per node",
			setup: func(st *fakeState) *structs.Job {
				withNodes(st, newNode("a"), newNode("b"), newNode("c"))
				return newJob("sys", "system", 1, 100, 100)
			},
			want: want{placed: 3, placedOn: []string{"a", "b", "c"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeState()
			job := tt.setup(st)
			st.jobs[job.NamespacedID()] = job
			plan, err := testOptions().Process(st, evalFor(job))
			if err != nil {
				t.Fatal(err)
			}
			placed, stopped := plan.Placements(), plan.Stops()
			if len(placed) != tt.want.placed || len(stopped) != tt.want.stopped {
				t.Fatalf("placed %d, stopped %d; want %d, %d\n%s", len(placed), len(stopped), tt.want.placed, tt.want.stopped, renderPlan(plan))
			}
			for i, n := range tt.want.placedOn {
				if placed[i].NodeID != n {
					t.Errorf("placement %d on %s, want %s", i, placed[i].NodeID, n)
				}
			}
			for _, a := range placed {
				if a.DesiredStatus != "run" || a.ClientStatus != "pending" || a.Job != job || a.EvalID != "eval-1" ||
					a.Metrics == nil || a.AllocatedResources == nil || a.TaskResources["app"] == nil || a.CreateTime == 0 {
					t.Errorf("placement fields: %+v", a)
				}
			}
			for _, a := range stopped {
				if a.DesiredStatus != structs.AllocDesiredStatusStop || a.DesiredDescription == "" {
					t.Errorf("stop fields: %+v", a)
				}
			}
			m := plan.FailedTGAllocs["web"]
			if tt.want.failedDim != "" && (m == nil || m.DimensionExhausted[tt.want.failedDim] == 0) {
				t.Errorf("want %s exhausted, got %+v", tt.want.failedDim, m)
			}
			if tt.want.failedFilter != "" && (m == nil || m.ConstraintFiltered[tt.want.failedFilter] == 0) {
				t.Errorf("want %q filtered, got %+v", tt.want.failedFilter, m)
			}
			if got := plan.QueuedAllocations["web"]; got != tt.want.queued {
				t.Errorf("queued = %d, want %d", got, tt.want.queued)
			}
		})
	}
}

func TestConstraintOperators(t *testing.T) {
	node := newNode("n1")
	node.Name = "host-1"
	node.NodeClass = "large"
	node.Attributes["cpu.numcores"] = "8"
	node.Attributes["os.version"] = "1.10.2"
	node.Attributes["features"] = "a,b,c"
	node.Meta["rack"] = "r1"
	tests := []struct {
		l, op, r string
		want     bool
	}{
		{"${attr.kernel.name}", "=", "linux", true},
		{"${attr.kernel.name}", "", "linux", true},
		{"${attr.kernel.name}", "!=", "linux", false},
		{"${attr.missing}", "!=", "linux", true},
		{"${attr.missing}", "=", "linux", false},
		{"${node.unique.id}", "=", "n1", true},
		{"${node.unique.name}", "=", "host-1", true},
		{"${node.datacenter}", "=", "dc1", true},
		{"${node.class}", "=", "large", true},
		{"${meta.rack}", "=", "r1", true},
		{"${attr.cpu.numcores}", ">", "4", true},
		{"${attr.cpu.numcores}", ">=", "8", true},
		{"${attr.cpu.numcores}", "<", "10", true},
		{"${attr.cpu.numcores}", "<=", "7", false},
		{"${attr.kernel.name}", "<", "m", true},
		{"${attr.kernel.name}", "regexp", "^lin", true},
		{"${attr.kernel.name}", "regexp", "[", false},
		{"${attr.os.version}", "version", ">= 1.9, < 2.0", true},
		{"${attr.os.version}", "version", "> 1.10.2", false},
		{"${attr.os.version}", "version", "~> 1.10", true},
		{"${attr.os.version}", "semver", "= 1.10.2", true},
		{"${attr.features}", "set_contains", "a,c", true},
		{"${attr.features}", "set_contains", "a,d", false},
		{"${attr.features}", "set_contains_any", "d,c", true},
		{"${attr.features}", "is_set", "", true},
		{"${attr.nope}", "is_set", "", false},
		{"${attr.nope}", "is_not_set", "", true},
		{"${node.unique.id}", "distinct_hosts", "true", true},
		{"${attr.kernel.name}", "bogus", "x", false},
	}
	cc := newConstraintChecker()
	for _, tt := range tests {
		c := &structs.Constraint{LTarget: tt.l, Operand: tt.op, RTarget: tt.r}
		if got := cc.meets(c, node); got != tt.want {
			t.Errorf("%s: got %v, want %v", c, got, tt.want)
		}
	}
}

func TestAllocsFit(t *testing.T) {
	node := newNode("n1")
	small := &structs.Allocation{Resources: &structs.Resources{CPU: 500, MemoryMB: 500}}
	tests := []struct {
		name   string
		allocs []*structs.Allocation
		fit    bool
		dim    string
	}{
		{"empty", nil, true, ""},
		{"two fit", []*structs.Allocation{small, small}, true, ""},
		{"cpu over", []*structs.Allocation{small, small, small}, false, "cpu"},
		{"memory over", []*structs.Allocation{{Resources: &structs.Resources{CPU: 1, MemoryMB: 2000}}}, false, "memory"},
	}
	for _, tt := range tests {
		fit, dim, _ := AllocsFit(node, tt.allocs)
		if fit != tt.fit || dim != tt.dim {
			t.Errorf("%s: fit=%v dim=%q, want %v %q", tt.name, fit, dim, tt.fit, tt.dim)
		}
	}
	_, _, half := AllocsFit(node, []*structs.Allocation{small})
	_, _, full := AllocsFit(node, []*structs.Allocation{small, small})
	if !(full > half) {
		t.Errorf("fuller node scores lower: %v <= %v", full, half)
	}
}
