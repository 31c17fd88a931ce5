package scheduler

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

// cniNode is a ready node with the given node attributes set to value.
func cniNode(id string, attrs ...string) *structs.Node {
	n := newNode(id)
	if n.Attributes == nil {
		n.Attributes = map[string]string{}
	}
	for _, a := range attrs {
		n.Attributes[a] = "1.0.0"
	}
	return n
}

// bridgePluginAttrs are the attributes of a node with every plugin of the
// bridge network.
var bridgePluginAttrs = []string{
	"plugins.cni.version.bridge", "plugins.cni.version.host-local", "plugins.cni.version.loopback",
	"plugins.cni.version.portmap", "plugins.cni.version.firewall",
}

// A bridge group is placed only on a node with the CNI plugins, a
// cni/<name> group only on one with that network; the failure names what
// is missing. Host-mode groups do not care.
func TestCNIPlacement(t *testing.T) {
	cases := []struct {
		name       string
		mode       string
		nodes      []*structs.Node
		placedOn   []string
		filteredBy string
	}{
		{"bridge: only on the node with the plugins", "bridge",
			[]*structs.Node{cniNode("a"), cniNode("b", bridgePluginAttrs...)}, []string{"b"}, ""},
		{"bridge: no node has them", "bridge",
			[]*structs.Node{cniNode("a"), cniNode("b", "plugins.cni.version.bridge")}, nil,
			"missing CNI plugin bridge (attribute plugins.cni.version.bridge)"},
		{"cni: only on the node with the network", "cni/mynet",
			[]*structs.Node{cniNode("a", bridgePluginAttrs...), cniNode("b", "plugins.cni.config.mynet")}, []string{"b"}, ""},
		{"cni: no node has it", "cni/mynet",
			[]*structs.Node{cniNode("a", "plugins.cni.config.other")}, nil,
			"missing CNI network mynet (attribute plugins.cni.config.mynet)"},
		{"host mode needs nothing", "host", []*structs.Node{cniNode("a")}, []string{"a"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newFakeState()
			st.nodes = tc.nodes
			job := newJob("web", "service", 1, 100, 100)
			job.TaskGroups[0].Networks = []*structs.NetworkResource{{Mode: tc.mode}}
			st.jobs[job.NamespacedID()] = job
			plan, err := testOptions().Process(st, evalFor(job))
			if err != nil {
				t.Fatal(err)
			}
			placed := plan.Placements()
			if len(placed) != len(tc.placedOn) {
				t.Fatalf("placed %d, want %d\n%s", len(placed), len(tc.placedOn), renderPlan(plan))
			}
			for i, n := range tc.placedOn {
				if placed[i].NodeID != n {
					t.Errorf("placement %d on %s, want %s", i, placed[i].NodeID, n)
				}
			}
			if tc.filteredBy != "" {
				m := plan.FailedTGAllocs["web"]
				if m == nil || m.ConstraintFiltered[tc.filteredBy] == 0 {
					t.Errorf("want the failure filtered by %q, got %+v", tc.filteredBy, m)
				}
			}
		})
	}
}
