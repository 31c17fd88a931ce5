package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// gpuGroup returns a device group vendor/type/name with instances ids
// ("!id" is unhealthy) and attributes ("memory=16 GiB").
func gpuGroup(tuple string, ids []string, attrs ...string) *structs.NodeDeviceResource {
	parts := strings.SplitN(tuple, "/", 3)
	g := &structs.NodeDeviceResource{Vendor: parts[0], Type: parts[1], Name: parts[2], Attributes: map[string]*structs.Attribute{}}
	for _, id := range ids {
		healthy := !strings.HasPrefix(id, "!")
		g.Instances = append(g.Instances, &structs.NodeDevice{ID: strings.TrimPrefix(id, "!"), Healthy: healthy})
	}
	for _, a := range attrs {
		k, v, _ := strings.Cut(a, "=")
		g.Attributes[k] = parseAttr(v)
	}
	return g
}

func withGroups(n *structs.Node, groups ...*structs.NodeDeviceResource) *structs.Node {
	n.NodeResources.Devices = groups
	return n
}

// deviceJob asks for devices in its one task.
func deviceJob(count int, devs ...*structs.RequestedDevice) *structs.Job {
	j := newJob("web", "service", count, 100, 100)
	j.TaskGroups[0].Tasks[0].Resources.Devices = devs
	return j
}

// holding returns a running alloc of another job that holds ids of group.
func holding(id, node, group string, ids ...string) *structs.Allocation {
	other := newJob("other", "service", 1, 100, 100)
	a := newAlloc(id, other, "web", 0, node, "running")
	parts := strings.SplitN(group, "/", 3)
	a.AllocatedResources = &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
		"app": {Devices: []*structs.AllocatedDeviceResource{{Vendor: parts[0], Type: parts[1], Name: parts[2], DeviceIDs: ids}}}}}
	return a
}

// renderDevices renders each placement's node and devices:
// "b:app=drover/gpu/fake[fake-0]".
func renderDevices(allocs []*structs.Allocation) string {
	var out []string
	for _, a := range allocs {
		s := a.NodeID + ":"
		for _, t := range sortedGroups(a.AllocatedResources.Tasks) {
			for _, d := range a.AllocatedResources.Tasks[t].Devices {
				s += fmt.Sprintf("%s=%s%v", t, d.ID(), d.DeviceIDs)
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestDevicePlacement(t *testing.T) {
	fake := "drover/gpu/fake"
	tests := []struct {
		name       string
		nodes      []*structs.Node
		allocs     []*structs.Allocation
		job        *structs.Job
		want       string // renderDevices of the placements
		wantFilter string
		wantDim    string
	}{
		{
			name:  "placed only where the device is, with its instance ID",
			nodes: []*structs.Node{newNode("a"), withGroups(newNode("b"), gpuGroup(fake, []string{"fake-0", "fake-1"}))},
			job:   deviceJob(1, &structs.RequestedDevice{Name: fake, Count: 1}),
			want:  "b:app=drover/gpu/fake[fake-0]",
		},
		{
			name:  "two allocations get distinct instances",
			nodes: []*structs.Node{withGroups(newNode("b"), gpuGroup(fake, []string{"fake-1", "fake-0"}))},
			job:   deviceJob(2, &structs.RequestedDevice{Name: "gpu", Count: 1}),
			want:  "b:app=drover/gpu/fake[fake-0] b:app=drover/gpu/fake[fake-1]",
		},
		{
			name:  "unhealthy instances are skipped",
			nodes: []*structs.Node{withGroups(newNode("b"), gpuGroup(fake, []string{"!fake-0", "fake-1"}))},
			job:   deviceJob(1, &structs.RequestedDevice{Name: "drover/gpu", Count: 1}),
			want:  "b:app=drover/gpu/fake[fake-1]",
		},
		{
			name:    "instances held by other allocations exhaust the node",
			nodes:   []*structs.Node{withGroups(newNode("b"), gpuGroup(fake, []string{"fake-0", "fake-1"}))},
			allocs:  []*structs.Allocation{holding("o1", "b", fake, "fake-0")},
			job:     deviceJob(1, &structs.RequestedDevice{Name: fake, Count: 2}),
			wantDim: "devices: drover/gpu/fake",
		},
		{
			name:   "free instance found next to a held one",
			nodes:  []*structs.Node{withGroups(newNode("b"), gpuGroup(fake, []string{"fake-0", "fake-1"}))},
			allocs: []*structs.Allocation{holding("o1", "b", fake, "fake-0")},
			job:    deviceJob(1, &structs.RequestedDevice{Name: fake, Count: 1}),
			want:   "b:app=drover/gpu/fake[fake-1]",
		},
		{
			name:       "missing device filters the node",
			nodes:      []*structs.Node{withGroups(newNode("b"), gpuGroup(fake, []string{"fake-0"}))},
			job:        deviceJob(1, &structs.RequestedDevice{Name: "nvidia/gpu", Count: 1}),
			wantFilter: "missing devices: nvidia/gpu",
		},
		{
			name: "attribute constraint with units",
			nodes: []*structs.Node{
				withGroups(newNode("a"), gpuGroup("nvidia/gpu/small", []string{"s0"}, "memory=4 GiB")),
				withGroups(newNode("b"), gpuGroup("nvidia/gpu/big", []string{"b0"}, "memory=16384 MiB")),
			},
			job: deviceJob(1, &structs.RequestedDevice{Name: "nvidia/gpu", Count: 1,
				Constraints: []*structs.Constraint{{LTarget: "${device.attr.memory}", Operand: ">=", RTarget: "8 GiB"}}}),
			want: "b:app=nvidia/gpu/big[b0]",
		},
		{
			name:  "unsatisfiable device constraint names the device",
			nodes: []*structs.Node{withGroups(newNode("a"), gpuGroup("nvidia/gpu/small", []string{"s0"}, "memory=4 GiB"))},
			job: deviceJob(1, &structs.RequestedDevice{Name: "nvidia/gpu", Count: 1,
				Constraints: []*structs.Constraint{{LTarget: "${device.attr.memory}", Operand: ">=", RTarget: "32 GiB"}}}),
			wantFilter: "devices: nvidia/gpu: ${device.attr.memory} >= 32 GiB",
		},
		{
			name: "vendor constraint",
			nodes: []*structs.Node{withGroups(newNode("a"),
				gpuGroup("amd/gpu/mi", []string{"m0"}), gpuGroup("nvidia/gpu/t4", []string{"t0"}))},
			job: deviceJob(1, &structs.RequestedDevice{Name: "gpu", Count: 1,
				Constraints: []*structs.Constraint{{LTarget: "${device.vendor}", Operand: "=", RTarget: "nvidia"}}}),
			want: "a:app=nvidia/gpu/t4[t0]",
		},
		{
			name: "affinity picks the preferred model",
			nodes: []*structs.Node{withGroups(newNode("a"),
				gpuGroup("nvidia/gpu/a100", []string{"x0"}), gpuGroup("nvidia/gpu/t4", []string{"t0"}))},
			job: deviceJob(1, &structs.RequestedDevice{Name: "nvidia/gpu", Count: 1,
				Affinities: []*structs.Affinity{{LTarget: "${device.model}", Operand: "=", RTarget: "t4", Weight: 50}}}),
			want: "a:app=nvidia/gpu/t4[t0]",
		},
		{
			name: "negative affinity avoids a model",
			nodes: []*structs.Node{withGroups(newNode("a"),
				gpuGroup("nvidia/gpu/a100", []string{"x0"}), gpuGroup("nvidia/gpu/t4", []string{"t0"}))},
			job: deviceJob(1, &structs.RequestedDevice{Name: "nvidia/gpu", Count: 1,
				Affinities: []*structs.Affinity{{LTarget: "${device.model}", Operand: "=", RTarget: "a100", Weight: -100}}}),
			want: "a:app=nvidia/gpu/t4[t0]",
		},
		{
			name: "affinity steers between nodes",
			nodes: []*structs.Node{
				withGroups(newNode("a"), gpuGroup("nvidia/gpu/t4", []string{"t0"}, "memory=16 GiB")),
				withGroups(newNode("b"), gpuGroup("nvidia/gpu/a100", []string{"x0"}, "memory=40 GiB")),
			},
			job: deviceJob(1, &structs.RequestedDevice{Name: "nvidia/gpu", Count: 1,
				Affinities: []*structs.Affinity{{LTarget: "${device.attr.memory}", Operand: ">", RTarget: "32 GiB", Weight: 100}}}),
			want: "b:app=nvidia/gpu/a100[x0]",
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
			if got := renderDevices(plan.Placements()); got != tt.want {
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
		})
	}
}

func TestCompareAttrs(t *testing.T) {
	tests := []struct {
		l, r string
		cmp  int
		ok   bool
	}{
		{"8 GiB", "8192 MiB", 0, true},
		{"16 GiB", "8 GiB", 1, true},
		{"1 GB", "1 GiB", -1, true},
		{"1.5 GHz", "1500 MHz", 0, true},
		{"4", "5", -1, true},
		{"8 GiB", "8 W", 0, false},
		{"8 GiB", "big", 0, false},
		{"abc", "abd", -1, true},
	}
	for _, tt := range tests {
		cmp, ok := compareAttrs(parseAttr(tt.l), parseAttr(tt.r))
		if cmp != tt.cmp || ok != tt.ok {
			t.Errorf("compare(%q, %q) = %d, %v; want %d, %v", tt.l, tt.r, cmp, ok, tt.cmp, tt.ok)
		}
	}
}

func TestDevicesFit(t *testing.T) {
	fake := "drover/gpu/fake"
	tests := []struct {
		name   string
		allocs []*structs.Allocation
		want   string
	}{
		{"distinct", []*structs.Allocation{holding("1", "b", fake, "fake-0"), holding("2", "b", fake, "fake-1")}, ""},
		{"twice", []*structs.Allocation{holding("1", "b", fake, "fake-0"), holding("2", "b", fake, "fake-0")}, "devices: drover/gpu/fake: instance fake-0 allocated twice"},
		{"other groups", []*structs.Allocation{holding("1", "b", fake, "fake-0"), holding("2", "b", "drover/gpu/other", "fake-0")}, ""},
	}
	for _, tt := range tests {
		fit, reason := DevicesFit(tt.allocs)
		if fit != (tt.want == "") || reason != tt.want {
			t.Errorf("%s: DevicesFit = %v, %q; want %q", tt.name, fit, reason, tt.want)
		}
	}
}
