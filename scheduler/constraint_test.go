package scheduler

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestConstraintOperatorsNomadSemantics pins the semantics of every
// constraint operator where Nomad's differ from the obvious reading.
func TestConstraintOperatorsNomadSemantics(t *testing.T) {
	node := newNode("n1")
	node.Attributes["kernel.version"] = "6.1.0-18-amd64"
	node.Attributes["nomad.version"] = "1.10.0"
	node.Attributes["beta"] = "1.7.0-beta.2"
	node.Attributes["four"] = "1.2.3.4"
	node.Attributes["big"] = "9007199254740993" // 2^53 + 1
	node.Attributes["ratio"] = "0.5"
	node.Attributes["features"] = "a, b,c"
	node.Attributes["cpu.numcores"] = "8"
	tests := []struct {
		name     string
		l, op, r string
		want     bool
	}{
		// = and != (and their aliases)
		{"== alias", "${attr.kernel.name}", "==", "linux", true},
		{"is alias", "${attr.kernel.name}", "is", "linux", true},
		{"not alias", "${attr.kernel.name}", "not", "darwin", true},
		{"unset != unset", "${attr.a}", "!=", "${attr.b}", false},
		{"unset = unset", "${attr.a}", "=", "${attr.b}", false},
		{"literal = literal", "x", "=", "x", true},
		// ${node.class} and ${node.pool} are always set, empty or not.
		{"empty class is set", "${node.class}", "is_set", "", true},
		{"empty class = empty", "${node.class}", "=", "", true},
		{"empty pool is set", "${node.pool}", "is_set", "", true},
		{"unknown node field", "${node.bogus}", "is_set", "", false},
		{"unterminated reference is a reference", "${attr.kernel.name", "=", "linux", true},
		// ordering: integers exactly, then floats, then strings
		{"integer beyond float precision", "${attr.big}", ">", "9007199254740992", true},
		{"float", "${attr.ratio}", "<", "0.75", true},
		{"integer vs float", "${attr.cpu.numcores}", ">", "1.5", true},
		{"lexical", "${attr.kernel.name}", ">=", "linux", true},
		{"lexical less", "abc", "<", "abd", true},
		{"order needs both sides", "${attr.nope}", "<", "5", false},
		// version: hashicorp/go-version constraints
		{"version range", "${attr.nomad.version}", "version", ">= 1.4, < 2", true},
		{"version pessimistic", "${attr.nomad.version}", "version", "~> 1.9", true},
		{"version pessimistic upper", "${attr.nomad.version}", "version", "~> 1.9.0", false},
		{"version four segments", "${attr.four}", "version", "> 1.2.3", true},
		{"version prerelease vs release constraint", "${attr.beta}", "version", ">= 1.0", false},
		{"version prerelease vs prerelease constraint", "${attr.beta}", "version", ">= 1.7.0-beta.1", true},
		{"kernel version is a prerelease", "${attr.kernel.version}", "version", ">= 3.19", false},
		{"version unparsable", "${attr.kernel.name}", "version", ">= 1", false},
		{"version bad constraint", "${attr.nomad.version}", "version", ">>> 1", false},
		// semver: prereleases ordered by the spec
		{"semver prerelease satisfies release constraint", "${attr.beta}", "semver", ">= 1.6.0", true},
		{"semver prerelease below release", "${attr.beta}", "semver", ">= 1.7.0", false},
		{"semver kernel version", "${attr.kernel.version}", "semver", ">= 3.19.0", true},
		{"semver not equal", "${attr.nomad.version}", "semver", "!= 1.10.1", true},
		{"semver implicit equal", "${attr.nomad.version}", "semver", "1.10.0", true},
		{"semver has no pessimistic operator", "${attr.nomad.version}", "semver", "~> 1.10", false},
		// regexp
		{"regexp", "${attr.kernel.version}", "regexp", "amd64$", true},
		{"regexp invalid", "${attr.kernel.name}", "regexp", "(", false},
		// sets: items trimmed
		{"set_contains trims", "${attr.features}", "set_contains", "b, c", true},
		{"set_contains_all", "${attr.features}", "set_contains_all", "a,b,c", true},
		{"set_contains_all missing", "${attr.features}", "set_contains_all", "a,z", false},
		{"set_contains_any", "${attr.features}", "set_contains_any", "z, a", true},
		{"set_contains_any none", "${attr.features}", "set_contains_any", "y,z", false},
		{"set_contains empty item", "${attr.features}", "set_contains", "a,", false},
		{"set on unset", "${attr.nope}", "set_contains", "a", false},
		// is_set / is_not_set
		{"is_not_set on set", "${attr.kernel.name}", "is_not_set", "", false},
		// placement-time operators pass the feasibility check
		{"distinct_hosts", "", "distinct_hosts", "true", true},
		{"distinct_property", "${meta.rack}", "distinct_property", "2", true},
	}
	cc := newConstraintChecker()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &structs.Constraint{LTarget: tt.l, Operand: tt.op, RTarget: tt.r}
			if got := cc.meets(c, node); got != tt.want {
				t.Errorf("%s: got %v, want %v", c, got, tt.want)
			}
			// The cached checker and a fresh one agree.
			if got := newConstraintChecker().meets(c, node); got != tt.want {
				t.Errorf("%s (fresh checker): got %v, want %v", c, got, tt.want)
			}
		})
	}
}

// TestDistinctPropertyUse checks what counts against a distinct_property
// limit: live allocations of the job, not those the plan stops, plus the
// plan's placements.
func TestDistinctPropertyUse(t *testing.T) {
	n1, n2 := newNode("n1"), newNode("n2")
	n1.Meta["rack"], n2.Meta["rack"] = "r1", "r2"
	job := newJob("web", structs.JobTypeService, 3, 100, 100)
	job.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty, RTarget: "2"}}
	tg := job.TaskGroups[0]
	running := newAlloc("a1", job, "web", 0, "n1", structs.AllocClientStatusRunning)
	stopping := newAlloc("a2", job, "web", 1, "n1", structs.AllocClientStatusRunning)
	done := newAlloc("a3", job, "web", 2, "n2", structs.AllocClientStatusComplete)
	st := newFakeState()
	st.nodes = []*structs.Node{n1, n2}
	r := &run{state: st, job: job, allocs: []*structs.Allocation{running, stopping, done}, nodes: st.nodes,
		plan: newPlan(&structs.Evaluation{ID: "e"}, job)}
	r.plan.AppendStop(stopping, descNotNeeded, 0)
	placed := newAlloc("p1", job, "web", 3, "n2", structs.AllocClientStatusPending)
	r.plan.AppendAlloc(placed)

	limits, err := r.distinctProperties(tg)
	if err != nil {
		t.Fatal(err)
	}
	if len(limits) != 1 {
		t.Fatalf("limits = %d, want 1", len(limits))
	}
	if got := limits[0].used; got["r1"] != 1 || got["r2"] != 1 {
		t.Errorf("used = %v, want r1:1 (a1; a2 is stopped) r2:1 (p1; a3 is complete)", got)
	}
	if reason := propertyBlocks(limits, n1); reason != "" {
		t.Errorf("n1 blocked: %s", reason)
	}
	limits[0].limit = 1
	if reason := propertyBlocks(limits, n2); reason == "" {
		t.Error("n2 not blocked at limit 1")
	}
}
