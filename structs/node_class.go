package structs

import (
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
)

// UniquePrefix marks node attributes and meta keys that identify one node
// ("unique.hostname"): the computed class leaves them out, and a
// constraint that reads one is checked node by node.
const UniquePrefix = "unique."

// ComputeClass returns the node's computed class: a digest of everything
// a node-level constraint, affinity or spread can read except what is
// unique to the node (its ID, name, and attributes and meta under
// "unique."). Nodes of one computed class are equally feasible for any
// job whose constraints read no unique value, so the scheduler checks one
// node of each class and reuses the answer. Capacity and device instances
// are not part of it: they are checked at placement.
//
// The state store sets Node.ComputedClass whenever it stores a node.
func (n *Node) ComputeClass() string {
	h := fnv.New64a()
	field := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	field("dc", n.Datacenter)
	field("class", n.NodeClass)
	field("pool", n.NodePool)
	writeMap := func(kind string, m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			if !strings.HasPrefix(k, UniquePrefix) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			field(kind, k, m[k])
		}
	}
	writeMap("attr", n.Attributes)
	writeMap("meta", n.Meta)
	drivers := make([]string, 0, len(n.Drivers))
	for name := range n.Drivers {
		drivers = append(drivers, name)
	}
	sort.Strings(drivers)
	for _, name := range drivers {
		d := n.Drivers[name]
		if d == nil {
			field("driver", name, "nil")
			continue
		}
		field("driver", name, strconv.FormatBool(d.Detected), strconv.FormatBool(d.Healthy))
	}
	if n.NodeResources != nil {
		for _, g := range n.NodeResources.Devices {
			if g == nil {
				continue
			}
			field("device", g.Vendor, g.Type, g.Name)
			names := make([]string, 0, len(g.Attributes))
			for k := range g.Attributes {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				v := "nil"
				if a := g.Attributes[k]; a != nil {
					v = a.GoString() + " " + a.Unit
				}
				field("device-attr", k, v)
			}
		}
	}
	return "v1:" + strconv.FormatUint(h.Sum64(), 10)
}
