package structs

import (
	"strings"
	"testing"
)

func TestPlacementValidate(t *testing.T) {
	aff := func(l, op, r string, w int) *Affinity {
		return &Affinity{LTarget: l, Operand: op, RTarget: r, Weight: w}
	}
	rack := func(w int, targets ...*SpreadTarget) *Spread {
		return &Spread{Attribute: "${meta.rack}", Weight: w, SpreadTarget: targets}
	}
	cases := []struct {
		name   string
		mutate func(j *Job)
		want   string // substring of the error; "" means valid
	}{
		{"affinity at every level", func(j *Job) {
			j.Affinities = []*Affinity{aff("${meta.rack}", "=", "r1", 50)}
			j.TaskGroups[0].Affinities = []*Affinity{aff("${node.class}", "!=", "small", -100)}
			j.TaskGroups[0].Tasks[0].Affinities = []*Affinity{aff("${attr.os.version}", "version", ">= 1.2", 100)}
		}, ""},
		{"spreads with and without targets", func(j *Job) {
			j.Spreads = []*Spread{rack(100, &SpreadTarget{"r1", 60}, &SpreadTarget{"r2", 40})}
			j.TaskGroups[0].Spreads = []*Spread{{Attribute: "${node.datacenter}", Weight: 1}}
		}, ""},
		{"affinity weight 0", func(j *Job) { j.Affinities = []*Affinity{aff("${meta.rack}", "=", "r1", 0)} },
			"job: affinity ${meta.rack}: weight 0 must be in [-100, 100] and not 0"},
		{"affinity weight too high", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Affinities = []*Affinity{aff("${meta.rack}", "=", "r1", 101)}
		}, `group "g", task "t": affinity ${meta.rack}: weight 101`},
		{"affinity operator", func(j *Job) { j.Affinities = []*Affinity{aff("${meta.rack}", "distinct_hosts", "", 10)} },
			`operator "distinct_hosts" is not an affinity operator`},
		{"affinity without attribute", func(j *Job) { j.Affinities = []*Affinity{aff("", "=", "x", 10)} },
			"attribute is missing"},
		{"affinity unknown reference", func(j *Job) { j.Affinities = []*Affinity{aff("${rack}", "=", "x", 10)} },
			`attribute "${rack}" names no node attribute`},
		{"affinity bad regexp", func(j *Job) { j.Affinities = []*Affinity{aff("${meta.rack}", "regexp", "r[", 10)} },
			`value "r[" is not a regular expression`},
		{"spread weight 0", func(j *Job) { j.Spreads = []*Spread{rack(0)} }, "spread ${meta.rack}: weight 0 must be in [1, 100]"},
		{"spread literal attribute", func(j *Job) { j.Spreads = []*Spread{{Attribute: "rack", Weight: 50}} },
			`attribute "rack" is a literal`},
		{"spread unknown attribute", func(j *Job) { j.Spreads = []*Spread{{Attribute: "${node.rack}", Weight: 50}} },
			`attribute "${node.rack}" names no node attribute`},
		{"spread percents over 100", func(j *Job) {
			j.TaskGroups[0].Spreads = []*Spread{rack(50, &SpreadTarget{"r1", 70}, &SpreadTarget{"r2", 40})}
		}, `group "g": spread ${meta.rack}: target percents add up to 110`},
		{"spread percent out of range", func(j *Job) { j.Spreads = []*Spread{rack(50, &SpreadTarget{"r1", 101})} },
			`target "r1": percent 101 must be in [0, 100]`},
		{"spread duplicate target", func(j *Job) {
			j.Spreads = []*Spread{rack(50, &SpreadTarget{"r1", 10}, &SpreadTarget{"r1", 20})}
		}, `target "r1" is given twice`},
		{"spread empty target", func(j *Job) { j.Spreads = []*Spread{rack(50, &SpreadTarget{"", 10})} },
			"target 1 has no value"},
		{"spread twice on one attribute", func(j *Job) { j.Spreads = []*Spread{rack(50), rack(20)} },
			"spread ${meta.rack} is given twice"},
		{"null spread", func(j *Job) { j.TaskGroups[0].Spreads = []*Spread{nil} }, `group "g": spread 1 is null`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			err := j.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
			if KindOf(err) != KindInvalid {
				t.Errorf("kind = %v, want invalid", KindOf(err))
			}
		})
	}
}

func TestPlacementCopyIsDeep(t *testing.T) {
	j := validJob()
	j.Affinities = []*Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: 50}}
	j.TaskGroups[0].Spreads = []*Spread{{Attribute: "${meta.rack}", Weight: 50, SpreadTarget: []*SpreadTarget{{"r1", 50}}}}
	j.TaskGroups[0].Tasks[0].Affinities = []*Affinity{{LTarget: "${meta.a}", Operand: "=", RTarget: "b", Weight: 1}}
	c := j.Copy()
	c.Affinities[0].Weight = 1
	c.TaskGroups[0].Spreads[0].SpreadTarget[0].Percent = 1
	c.TaskGroups[0].Tasks[0].Affinities[0].RTarget = "z"
	if j.Affinities[0].Weight != 50 || j.TaskGroups[0].Spreads[0].SpreadTarget[0].Percent != 50 || j.TaskGroups[0].Tasks[0].Affinities[0].RTarget != "b" {
		t.Fatal("Copy shares affinities or spreads with the original")
	}
}

func TestComputeClass(t *testing.T) {
	base := func() *Node {
		return &Node{ID: "a", Name: "a", Datacenter: "dc1", NodeClass: "large",
			Attributes: map[string]string{"kernel.name": "linux", "unique.hostname": "host-a"},
			Meta:       map[string]string{"rack": "r1", "unique.serial": "1"},
			Drivers:    map[string]*DriverInfo{"exec": {Detected: true, Healthy: true}}}
	}
	a := base().ComputeClass()
	if !strings.HasPrefix(a, "v1:") {
		t.Fatalf("class %q has no version prefix", a)
	}
	same := base()
	same.ID, same.Name = "b", "b"
	same.Attributes["unique.hostname"] = "host-b"
	same.Meta["unique.serial"] = "2"
	if got := same.ComputeClass(); got != a {
		t.Errorf("nodes differing only in unique values have classes %q and %q", a, got)
	}
	for name, change := range map[string]func(n *Node){
		"datacenter": func(n *Node) { n.Datacenter = "dc2" },
		"class":      func(n *Node) { n.NodeClass = "small" },
		"attribute":  func(n *Node) { n.Attributes["kernel.name"] = "darwin" },
		"meta":       func(n *Node) { n.Meta["rack"] = "r2" },
		"new meta":   func(n *Node) { n.Meta["zone"] = "z" },
		"driver":     func(n *Node) { n.Drivers["exec"].Healthy = false },
		"devices": func(n *Node) {
			n.NodeResources = &NodeResources{Devices: []*NodeDeviceResource{{Vendor: "nvidia", Type: "gpu", Name: "t4"}}}
		},
	} {
		n := base()
		change(n)
		if n.ComputeClass() == a {
			t.Errorf("changing the %s keeps the class", name)
		}
	}
}
