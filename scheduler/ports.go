package scheduler

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/drover-io/drover/structs"
)

// Ports are a node resource: every address of a node has each port once.
// A group asks for ports in its network block (and, in older jobs, in its
// tasks' resources); the scheduler gives each a host port on the address
// of the port's host network: the static port when it is free, or a free
// port of the node's dynamic range, picked at random from Options.Rand.
// The ports of the node's proposed allocations (those in the state that
// stay, plus the plan's placements) are taken; so are the client's
// reserved ports (on every address) and a host network's reserved ports
// (on its addresses). A port with ignore_collision neither takes nor
// checks. The plan applier re-checks with PortsFit.
//
// Failures: a port naming a host network the node lacks filters the node
// (`missing host network "public"`, like a constraint); a static port
// already taken exhausts it ("network: port collision http=8080"), as does
// a dynamic range with no free port ("network: dynamic port selection
// failed"). job plan and job run show both like other dimensions.
const (
	portCollisionPrefix   = "network: port collision "
	portDynamicExhausted  = "network: dynamic port selection failed"
	hostNetworkMissingKey = "missing host network "
)

// dynamicPortTries is how many random picks are made before scanning the
// range for a free port.
const dynamicPortTries = 20

// requestsPorts reports whether group tg asks for any port.
func requestsPorts(tg *structs.TaskGroup) bool {
	for _, n := range tg.Networks {
		if n.HasPorts() {
			return true
		}
	}
	for _, t := range tg.Tasks {
		if t.Resources != nil {
			for _, n := range t.Resources.Networks {
				if n.HasPorts() {
					return true
				}
			}
		}
	}
	return false
}

// hostNetworkName is the host network a port binds on.
func hostNetworkName(p structs.Port) string {
	if p.HostNetwork == "" {
		return structs.DefaultHostNetwork
	}
	return p.HostNetwork
}

// nodeAddress is an address of a node's host network.
type nodeAddress struct {
	ip       string
	reserved []int // the host network's reserved ports
}

// hostNetworkAddress returns the address of node's host network name: the
// first address fingerprinted with that alias, or, for "default" on a node
// that reports no interfaces, its unique.network.ip-address.
func hostNetworkAddress(node *structs.Node, name string) (nodeAddress, bool) {
	if nr := node.NodeResources; nr != nil {
		for _, nn := range nr.NodeNetworks {
			for _, a := range nn.Addresses {
				if a.Alias == name && a.Address != "" {
					reserved, _ := structs.ParsePortRanges(a.ReservedPorts) // checked by the client
					return nodeAddress{ip: a.Address, reserved: reserved}, true
				}
			}
		}
		if name == structs.DefaultHostNetwork {
			for _, n := range nr.Networks {
				if n != nil && n.IP != "" {
					return nodeAddress{ip: n.IP}, true
				}
			}
		}
	}
	if name == structs.DefaultHostNetwork {
		if ip := node.Attributes["unique.network.ip-address"]; ip != "" {
			return nodeAddress{ip: ip}, true
		}
	}
	return nodeAddress{}, false
}

// missingHostNetwork returns the filter key when tg names a host network
// the node lacks, else "".
func missingHostNetwork(node *structs.Node, tg *structs.TaskGroup) string {
	if !requestsPorts(tg) {
		return ""
	}
	for _, n := range groupNetworks(tg) {
		for _, p := range n.net.Ports() {
			hn := hostNetworkName(p)
			if _, ok := hostNetworkAddress(node, hn); !ok {
				return hostNetworkMissingKey + strconv.Quote(hn)
			}
		}
	}
	return ""
}

// taskNetwork is one network block of a group: the group's (task "") or a
// task's.
type taskNetwork struct {
	task string
	net  *structs.NetworkResource
}

// groupNetworks returns the group's network block, then its tasks'.
func groupNetworks(tg *structs.TaskGroup) []taskNetwork {
	var out []taskNetwork
	for _, n := range tg.Networks {
		if n != nil {
			out = append(out, taskNetwork{net: n})
		}
	}
	for _, t := range tg.Tasks {
		if t.Resources == nil {
			continue
		}
		for _, n := range t.Resources.Networks {
			if n != nil {
				out = append(out, taskNetwork{task: t.Name, net: n})
			}
		}
	}
	return out
}

// portSet is a set of ports of one address: a bit per port.
type portSet [(structs.MaxValidPort + 1) / 64]uint64

func (s *portSet) has(p int) bool {
	return p >= 0 && p <= structs.MaxValidPort && s[p/64]&(1<<(p%64)) != 0
}
func (s *portSet) add(p int) {
	if p >= 0 && p <= structs.MaxValidPort {
		s[p/64] |= 1 << (p % 64)
	}
}

// portUsage is the ports a node's allocations hold, by address.
type portUsage struct {
	byIP   map[string]*portSet
	lastIP string // the address of last, to skip the map lookup
	last   *portSet
}

func (u *portUsage) set(ip string) *portSet {
	if u.last != nil && ip == u.lastIP {
		return u.last
	}
	s, ok := u.byIP[ip]
	if !ok {
		s = &portSet{}
		u.byIP[ip] = s
	}
	u.lastIP, u.last = ip, s
	return s
}

func (u *portUsage) has(ip string, port int) bool {
	if s, ok := u.byIP[ip]; ok {
		return s.has(port)
	}
	return false
}

func (u *portUsage) add(ip string, port int) { u.set(ip).add(port) }

// usedPorts returns the ports allocs hold, ignore_collision ones aside.
func usedPorts(allocs []*structs.Allocation) *portUsage {
	used := &portUsage{byIP: map[string]*portSet{}}
	forEachPort(allocs, func(_ *structs.Allocation, label, ip string, port int) {
		used.add(ip, port)
	})
	return used
}

// forEachPort calls fn for every port allocs hold, ignore_collision ones
// aside: the group's (AllocatedSharedResources.Ports, or its Networks for
// an allocation without Ports) and its tasks'.
func forEachPort(allocs []*structs.Allocation, fn func(a *structs.Allocation, label, ip string, port int)) {
	for _, a := range allocs {
		ar := a.AllocatedResources
		if ar == nil {
			continue
		}
		if len(ar.Shared.Ports) > 0 {
			for _, p := range ar.Shared.Ports {
				if !p.IgnoreCollision {
					fn(a, p.Label, p.HostIP, p.Value)
				}
			}
		} else {
			for _, n := range ar.Shared.Networks {
				for _, p := range n.Ports() {
					if !p.IgnoreCollision {
						fn(a, p.Label, n.IP, p.Value)
					}
				}
			}
		}
		for _, tr := range ar.Tasks {
			if tr == nil {
				continue
			}
			for _, n := range tr.Networks {
				for _, p := range n.Ports() {
					if !p.IgnoreCollision {
						fn(a, p.Label, n.IP, p.Value)
					}
				}
			}
		}
	}
}

// portAssignment is what a placement gets: the group's network as placed,
// its ports as mappings, and each task's placed network blocks.
type portAssignment struct {
	shared []*structs.NetworkResource
	ports  structs.AllocatedPorts
	tasks  map[string][]*structs.NetworkResource
}

// dynamicRange returns the node's dynamic port range.
func dynamicRange(node *structs.Node) (lo, hi int) {
	lo, hi = structs.DefaultMinDynamicPort, structs.DefaultMaxDynamicPort
	if nr := node.NodeResources; nr != nil {
		if nr.MinDynamicPort > 0 {
			lo = nr.MinDynamicPort
		}
		if nr.MaxDynamicPort > 0 {
			hi = nr.MaxDynamicPort
		}
	}
	return lo, hi
}

// assignPorts gives every port tg asks for a host port on node, given the
// ports the node's proposed allocations hold (used, only read), picking
// dynamic ports with rng. It returns nil (and no failure) when tg has no
// network block.
func assignPorts(node *structs.Node, used *portUsage, tg *structs.TaskGroup, rng *rand.Rand) (*portAssignment, deviceFailure) {
	nets := groupNetworks(tg)
	if len(nets) == 0 {
		return nil, deviceFailure{}
	}
	var reserved []int
	if rr := node.ReservedResources; rr != nil {
		reserved, _ = structs.ParsePortRanges(rr.Networks.ReservedHostPorts) // checked by the client
	}
	type given struct {
		ip   string
		port int
	}
	var mine []given // this placement's ports: a few
	taken := func(addr nodeAddress, port int) bool {
		_, r1 := slices.BinarySearch(reserved, port)
		_, r2 := slices.BinarySearch(addr.reserved, port)
		return r1 || r2 || used.has(addr.ip, port) || slices.Contains(mine, given{addr.ip, port})
	}
	lo, hi := dynamicRange(node)
	out := &portAssignment{}
	defaultAddr, hasDefault := hostNetworkAddress(node, structs.DefaultHostNetwork)
	for _, tn := range nets {
		placed := &structs.NetworkResource{Mode: tn.net.Mode}
		if hasDefault && tn.net.Mode != structs.NetworkModeNone {
			placed.IP = defaultAddr.ip
		}
		give := func(p structs.Port) (structs.Port, deviceFailure) {
			hn := hostNetworkName(p)
			addr, ok := hostNetworkAddress(node, hn)
			if !ok {
				return p, deviceFailure{filtered: hostNetworkMissingKey + strconv.Quote(hn)}
			}
			switch {
			case p.Value != 0 && p.IgnoreCollision:
			case p.Value != 0:
				if taken(addr, p.Value) {
					return p, deviceFailure{exhausted: portCollisionPrefix + p.Label + "=" + strconv.Itoa(p.Value)}
				}
				mine = append(mine, given{addr.ip, p.Value})
			default:
				port, ok := pickDynamicPort(lo, hi, rng, func(port int) bool { return taken(addr, port) })
				if !ok {
					return p, deviceFailure{exhausted: portDynamicExhausted}
				}
				p.Value = port
				mine = append(mine, given{addr.ip, port})
			}
			if tn.task == "" {
				out.ports = append(out.ports, structs.AllocatedPortMapping{
					Label: p.Label, Value: p.Value, To: p.To, HostIP: addr.ip, IgnoreCollision: p.IgnoreCollision})
			}
			return p, deviceFailure{}
		}
		// Static ports first, so that a dynamic pick never takes one.
		for _, p := range tn.net.ReservedPorts {
			gp, fail := give(p)
			if fail.failed() {
				return nil, fail
			}
			placed.ReservedPorts = append(placed.ReservedPorts, gp)
		}
		for _, p := range tn.net.DynamicPorts {
			gp, fail := give(p)
			if fail.failed() {
				return nil, fail
			}
			placed.DynamicPorts = append(placed.DynamicPorts, gp)
		}
		if tn.task == "" {
			out.shared = append(out.shared, placed)
			continue
		}
		if out.tasks == nil {
			out.tasks = map[string][]*structs.NetworkResource{}
		}
		out.tasks[tn.task] = append(out.tasks[tn.task], placed)
	}
	return out, deviceFailure{}
}

// pickDynamicPort picks a port of [lo, hi] that taken does not refuse: a
// few random tries, then a scan from a random start. It reports false
// when every port is taken.
func pickDynamicPort(lo, hi int, rng *rand.Rand, taken func(int) bool) (int, bool) {
	if hi < lo {
		return 0, false
	}
	n := hi - lo + 1
	for range dynamicPortTries {
		if p := lo + rng.IntN(n); !taken(p) {
			return p, true
		}
	}
	start := rng.IntN(n)
	for i := range n {
		if p := lo + (start+i)%n; !taken(p) {
			return p, true
		}
	}
	return 0, false
}

// withPorts returns a copy of allocated with the group's and the tasks'
// placed networks and the group's port mappings set.
func withPorts(allocated *structs.AllocatedResources, pa *portAssignment) *structs.AllocatedResources {
	if pa == nil || allocated == nil {
		return allocated
	}
	c := *allocated
	c.Shared.Networks = pa.shared
	c.Shared.Ports = pa.ports
	if len(pa.tasks) > 0 {
		c.Tasks = make(map[string]*structs.AllocatedTaskResources, len(allocated.Tasks))
		for name, tr := range allocated.Tasks {
			if nets, ok := pa.tasks[name]; ok && tr != nil {
				trc := *tr
				trc.Networks = nets
				tr = &trc
			}
			c.Tasks[name] = tr
		}
	}
	return &c
}

// PortsFit reports whether no host port is held twice on one address by
// allocs (the proposed allocations of one node); when one is, reason
// names it ("network: port collision http=8080"). The plan applier uses
// it, with AllocsFit and DevicesFit, so that two schedulers never give the
// same port. Reserved ports are the scheduler's check at placement: an
// allocation keeps its port if the client reserves it later.
func PortsFit(allocs []*structs.Allocation) (fit bool, reason string) {
	seen := &portUsage{byIP: map[string]*portSet{}}
	fit = true
	forEachPort(allocs, func(_ *structs.Allocation, label, ip string, port int) {
		if fit && seen.has(ip, port) {
			fit, reason = false, portCollisionPrefix+label+"="+strconv.Itoa(port)
		}
		seen.add(ip, port)
	})
	return fit, reason
}

// portsAfterPreemption assigns tg's ports on node once preempt are gone;
// nil (the failure recorded in metric) when they do not fit even then.
func (r *run) portsAfterPreemption(node *structs.Node, tg *structs.TaskGroup, preempt []*structs.Allocation, metric *structs.AllocMetric) (*portAssignment, error) {
	u, err := r.usage(node.ID)
	if err != nil {
		return nil, err
	}
	gone := map[string]bool{}
	for _, a := range preempt {
		gone[a.ID] = true
	}
	var remaining []*structs.Allocation
	for _, a := range u.allocs {
		if !gone[a.ID] {
			remaining = append(remaining, a)
		}
	}
	pa, fail := assignPorts(node, usedPorts(remaining), tg, r.rng)
	if fail.failed() {
		fail.record(metric)
		return nil, nil
	}
	return pa, nil
}

// evalRand returns the dynamic port source of an evaluation without
// Options.Rand: seeded from its ID, so that a run is reproducible.
func evalRand(eval *structs.Evaluation) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(eval.ID))
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// portCache is the ports a node's proposed allocations hold, kept current
// as the run places allocations there (see nodeUsage).
type portCache struct {
	u    *nodeUsage // the usage it was counted from
	n    int        // how many of u.allocs are counted
	used *portUsage
}

// portsUsed returns the ports held on a node whose proposed allocations
// are u: counted once per usage, then only the placements added since.
func (r *run) portsUsed(nodeID string, u *nodeUsage) *portUsage {
	if r.ports == nil {
		r.ports = map[string]*portCache{}
	}
	c, ok := r.ports[nodeID]
	if !ok || c.u != u || c.n > len(u.allocs) {
		c = &portCache{u: u, used: &portUsage{byIP: map[string]*portSet{}}}
		r.ports[nodeID] = c
	}
	forEachPort(u.allocs[c.n:], func(_ *structs.Allocation, _, ip string, port int) { c.used.add(ip, port) })
	c.n = len(u.allocs)
	return c.used
}

// candidatePorts assigns tg's ports on node for a candidate whose node
// usage is u; see assignPorts.
func (r *run) candidatePorts(node *structs.Node, u *nodeUsage, tg *structs.TaskGroup) (*portAssignment, deviceFailure) {
	if len(tg.Networks) == 0 && !requestsPorts(tg) {
		return nil, deviceFailure{}
	}
	return assignPorts(node, r.portsUsed(node.ID, u), tg, r.rng)
}
