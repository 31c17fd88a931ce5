package scheduler

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/drover-io/drover/structs"
)

// How a group's allocations find their nodes.
//
// A placer serves one task group for one evaluation. It visits the
// candidate nodes (ready, in the job's datacenters) in an order shuffled
// per evaluation (seeded by the evaluation ID, so that a run is
// reproducible and concurrent evaluations start on different nodes), and
// keeps each node that can take an allocation as a candidate, scored, in
// a max-heap. A placement takes the best candidate; only that node's
// score changes, so it is re-scored and pushed back while another
// allocation still fits. A placement thus costs O(log n) instead of a
// scan of every node, and no node set is copied per placement.
//
// Sampling: without spreads or affinities, the placer visits nodes only
// until it holds two candidates per allocation still to place (at least
// minSample), in the spirit of Nomad's "power of two choices" limit, and
// visits more only when its candidates are used up or the best one is a
// node the allocation is being rescheduled away from; on a large cluster a
// small job looks at a small sample. Spreads and affinities need every
// value of their attributes, so they make the placer visit every node
// first. A placement that fits on no visited node visits the rest before
// it fails, so a failure always reflects every node.
//
// Spreads: candidates are kept in one heap per combination of spread
// values (a rack); a placement compares the top of each heap plus that
// rack's spread score, which only changes when a placement lands in it.
//
// Scores: a node's score is the sum of its bin-packing score (rank.go),
// its device affinity score (devices.go), its node affinity score
// (affinity.go), its spread score (spread.go) and, for a node a
// rescheduled allocation failed on, -1 (reschedule.go). Ties go by a key
// hashed from the node ID and the evaluation ID (tieKey), so that
// concurrent evaluations do not all pick the same one of equal nodes.

// minSample is the fewest candidates a placer gathers before placing.
const minSample = 512

// maxScoreMeta is how many nodes' scores a placement's metric lists.
const maxScoreMeta = 3

// placer places the allocations of one task group (see above).
type placer struct {
	r        *run
	tg       *structs.TaskGroup
	ask      allocResources
	scope    string           // distinct_hosts: "job", "group" or ""
	props    []*propertyLimit // distinct_property, kept counted
	devices  bool
	spread   *spreadScorer   // nil without spreads
	affinity *affinityScorer // nil without affinities

	order    *visitOrder     // nil when placing on given nodes
	skip     map[string]bool // visited ahead of order (nodes the plan already uses)
	next     int             // the next node of order to visit
	visitAll bool            // spreads or affinities: visit every node first
	missing  int             // allocations the placer is expected to place
	placed   int
	buckets  map[string]*bucket
	list     []*bucket // buckets in creation order
	held     int       // candidates in the buckets

	// metric counts the visited nodes; snapshot is a copy that
	// placements share until the next visit changes the counts.
	metric   structs.AllocMetric
	snapshot *structs.AllocMetric
}

// newPlacer returns the placer of tg; missing is how many allocations it
// is expected to place (0 when it places on given nodes, see placeOn).
func (r *run) newPlacer(tg *structs.TaskGroup, missing int) (*placer, error) {
	p := &placer{
		r:        r,
		tg:       tg,
		ask:      newAllocResources(r.job, tg),
		scope:    distinctHostsScope(r.job, tg),
		devices:  requestsDevices(tg),
		spread:   newSpreadScorer(r.job, tg),
		affinity: newAffinityScorer(r.job, tg),
		buckets:  map[string]*bucket{},
		missing:  missing,
	}
	var err error
	if p.props, err = r.distinctProperties(tg); err != nil {
		return nil, err
	}
	if missing == 0 {
		return p, nil
	}
	p.order = r.visitOrder()
	p.visitAll = p.spread != nil || p.affinity != nil || r.exhaustive
	if p.spread != nil {
		if err := p.countExisting(); err != nil {
			return nil, err
		}
	}
	// Nodes the plan already places on come first: they are the fuller
	// ones, which bin-packing prefers, and a sample could miss them.
	if len(r.plan.NodeAllocation) > 0 && !p.visitAll {
		ids := make([]string, 0, len(r.plan.NodeAllocation))
		for id := range r.plan.NodeAllocation {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		byID := r.candidateIndex()
		p.skip = map[string]bool{}
		for _, id := range ids {
			if n, ok := byID[id]; ok {
				p.skip[id] = true
				if err := p.visit(n); err != nil {
					return nil, err
				}
			}
		}
	}
	return p, nil
}

// countExisting counts, for the spreads, the group's allocations that
// stay.
func (p *placer) countExisting() error {
	r := p.r
	gone := map[string]bool{}
	for _, byNode := range []map[string][]*structs.Allocation{r.plan.NodeUpdate, r.plan.NodePreemptions} {
		for _, allocs := range byNode {
			for _, a := range allocs {
				gone[a.ID] = true
			}
		}
	}
	byID := r.candidateIndex()
	for _, a := range r.allocs {
		if a.TaskGroup != p.tg.Name || a.TerminalStatus() || gone[a.ID] {
			continue
		}
		node, ok := byID[a.NodeID]
		if !ok {
			var err error
			if node, err = r.state.NodeByID(a.NodeID); err != nil {
				return err
			}
			if node == nil {
				continue
			}
		}
		p.spread.add(p.spread.keyOf(node))
	}
	return nil
}

// visitOrder is the run's visiting order of the candidate nodes: a
// permutation drawn lazily, one Fisher-Yates step per node visited, so
// that a placer that visits a sample pays for the sample only.
type visitOrder struct {
	nodes []*structs.Node // a copy of the candidates; nodes[:drawn] in order
	drawn int
	rng   *rand.Rand
}

// visitOrder returns the run's visiting order, seeded by the evaluation ID.
func (r *run) visitOrder() *visitOrder {
	if r.order == nil {
		h := fnv.New64a()
		h.Write([]byte(r.eval.ID))
		r.order = &visitOrder{
			nodes: slices.Clone(r.candidateNodes()),
			rng:   rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15)),
		}
	}
	return r.order
}

// len returns how many nodes the order holds.
func (o *visitOrder) len() int { return len(o.nodes) }

// at returns the i-th node of the order.
func (o *visitOrder) at(i int) *structs.Node {
	for o.drawn <= i {
		j := o.drawn + o.rng.IntN(len(o.nodes)-o.drawn)
		o.nodes[o.drawn], o.nodes[j] = o.nodes[j], o.nodes[o.drawn]
		o.drawn++
	}
	return o.nodes[i]
}

// candidateIndex returns the candidate nodes by ID.
func (r *run) candidateIndex() map[string]*structs.Node {
	if r.candByID == nil {
		r.candByID = make(map[string]*structs.Node, len(r.candidateNodes()))
		for _, n := range r.candidateNodes() {
			r.candByID[n.ID] = n
		}
	}
	return r.candByID
}

// evaluate checks whether node can take one more allocation of the group
// and scores it; when it cannot, it records why in metric and, when only
// room is missing, reports exhausted.
func (p *placer) evaluate(node *structs.Node, metric *structs.AllocMetric) (c *candidate, exhausted bool, err error) {
	r := p.r
	metric.NodesEvaluated++
	if !r.feasible(node, p.tg, metric) {
		return nil, false, nil
	}
	u, err := r.usage(node.ID)
	if err != nil {
		return nil, false, err
	}
	if p.scope != "" && sharesHost(u.allocs, r.job, p.tg, p.scope) {
		filterNode(metric, node, filterDistinctHosts)
		return nil, false, nil
	}
	if reason := propertyBlocks(p.props, node); reason != "" {
		filterNode(metric, node, reason)
		return nil, false, nil
	}
	fit, dim, binpack := fits(node, u, p.ask.total)
	if !fit {
		metric.NodesExhausted++
		if metric.DimensionExhausted == nil {
			metric.DimensionExhausted = map[string]int{}
		}
		metric.DimensionExhausted[dim]++
		if node.NodeClass != "" {
			if metric.ClassExhausted == nil {
				metric.ClassExhausted = map[string]int{}
			}
			metric.ClassExhausted[node.NodeClass]++
		}
		return nil, true, nil
	}
	c = &candidate{node: node, binpack: binpack, tie: tieKey(r.tieSeed, node.ID)}
	if p.devices {
		devices, devScore, devFail := assignDevices(node, u.allocs, p.tg, r.regexps)
		if devFail.failed() {
			devFail.record(metric)
			return nil, false, nil
		}
		c.devices, c.devScore = devices, devScore
	}
	ports, portFail := r.candidatePorts(node, u, p.tg) // ports.go
	if portFail.failed() {
		portFail.record(metric)
		return nil, false, nil
	}
	c.ports = ports
	if p.affinity != nil {
		c.affinity = p.affinity.score(r, node)
	}
	c.partial = c.binpack + c.devScore + c.affinity
	return c, false, nil
}

// visit evaluates node and keeps it as a candidate when it can take an
// allocation.
func (p *placer) visit(node *structs.Node) error {
	p.snapshot = nil
	c, _, err := p.evaluate(node, &p.metric)
	if err != nil || c == nil {
		return err
	}
	p.keep(node, c)
	return nil
}

// keep adds c, a candidate on node, to the bucket of node's spread values.
func (p *placer) keep(node *structs.Node, c *candidate) {
	key := ""
	if p.spread != nil {
		key = p.spread.keyString(node)
	}
	b, ok := p.buckets[key]
	if !ok {
		b = &bucket{}
		if p.spread != nil {
			b.key = p.spread.keyOf(node)
			p.spread.feasible(b.key)
		}
		p.buckets[key] = b
		p.list = append(p.list, b)
	}
	b.push(c)
	p.held++
}

// fill visits nodes until n more candidates were found or every node was
// visited.
func (p *placer) fill(n int) error {
	found := 0
	for p.next < p.order.len() && (p.visitAll || found < n) {
		node := p.order.at(p.next)
		p.next++
		if p.skip[node.ID] {
			continue
		}
		if p.next%256 == 0 {
			if err := p.r.interrupted(); err != nil {
				return err
			}
		}
		before := p.held
		if err := p.visit(node); err != nil {
			return err
		}
		found += p.held - before
	}
	return nil
}

// scored is a candidate with its full score for one placement.
type scored struct {
	c       *candidate
	spread  float64
	penalty float64
	total   float64
}

// choose returns the best candidate for a placement whose allocation is
// kept off the penalized nodes if it can be, and the runners-up, best
// first; ok is false when the placer holds no candidate.
func (p *placer) choose(penalized map[string]bool) (best scored, runners []scored, ok bool) {
	var top [maxScoreMeta]scored
	n := 0
	consider := func(s scored) {
		// Insert into the best maxScoreMeta, in order.
		i := n
		for i > 0 && better(s.total, s.c, top[i-1].total, top[i-1].c) {
			if i < maxScoreMeta {
				top[i] = top[i-1]
			}
			i--
		}
		if i < maxScoreMeta {
			top[i] = s
			if n < maxScoreMeta {
				n++
			}
		}
	}
	score := func(c *candidate, spread float64) scored {
		s := scored{c: c, spread: spread}
		if penalized[c.node.ID] {
			s.penalty = nodeReschedulePenalty
		}
		s.total = c.partial + spread - s.penalty
		return s
	}
	for _, b := range p.list {
		if len(b.heap) == 0 {
			continue
		}
		var spread float64
		if p.spread != nil {
			spread = p.spread.score(b.key)
		}
		if len(penalized) > 0 {
			// The best of a heap whose top is penalized may lie below
			// it: look at the nodes down to the first unpenalized one.
			for _, c := range p.headUntilUnpenalized(b, penalized) {
				consider(score(c, spread))
			}
			continue
		}
		consider(score(b.heap[0], spread))
		if p.spread == nil {
			// One heap: the runner-up is one of the top's children.
			for i := 1; i <= 2 && i < len(b.heap); i++ {
				consider(score(b.heap[i], spread))
			}
		}
	}
	if n == 0 {
		return scored{}, nil, false
	}
	return top[0], append([]scored(nil), top[1:n]...), true
}

// headUntilUnpenalized returns b's candidates in score order down to and
// including the first that is not penalized.
func (p *placer) headUntilUnpenalized(b *bucket, penalized map[string]bool) []*candidate {
	var out []*candidate
	// Walk the heap best-first with a small frontier; the penalized set
	// is tiny, so so is the walk.
	frontier := []int{0}
	for len(frontier) > 0 {
		bi := 0
		for i := 1; i < len(frontier); i++ {
			if b.less(frontier[i], frontier[bi]) {
				bi = i
			}
		}
		i := frontier[bi]
		frontier = append(frontier[:bi], frontier[bi+1:]...)
		c := b.heap[i]
		out = append(out, c)
		if !penalized[c.node.ID] {
			break
		}
		for _, ch := range []int{2*i + 1, 2*i + 2} {
			if ch < len(b.heap) {
				frontier = append(frontier, ch)
			}
		}
	}
	return out
}

// place places one allocation of the group named name on the best node,
// or records in the plan why it fits nowhere (preempting where the
// configuration allows it: preemptOrFail). prev is the allocation it
// replaces, deploymentID tags a rolling update's replacement. With
// coalesce, a group that already failed fails again without trying:
// nothing changed since. It reports whether the allocation was placed.
func (p *placer) place(name string, prev *structs.Allocation, deploymentID string, coalesce bool) (bool, error) {
	r := p.r
	if err := r.interrupted(); err != nil {
		return false, err
	}
	if f, ok := r.plan.FailedTGAllocs[p.tg.Name]; ok && coalesce {
		r.plan.failed(p.tg.Name, f)
		return false, nil
	}
	want := max(2*min(p.missing-p.placed, p.order.len()), minSample)
	if p.placed == 0 {
		if err := p.fill(want - p.held); err != nil {
			return false, err
		}
	}
	penalized := r.penalizedNodes(prev)
	for {
		best, runners, ok := p.choose(penalized)
		if (!ok || best.penalty > 0) && p.next < p.order.len() {
			// Used up, or only nodes the allocation failed on: look
			// further before settling.
			if err := p.fill(want); err != nil {
				return false, err
			}
			continue
		}
		if ok && p.props != nil && propertyBlocks(p.props, best.c.node) != "" {
			// A placement since the node was visited used up its
			// property value: it is out for the rest of the group.
			best.c.bucket.remove(best.c.idx)
			p.held--
			continue
		}
		if ok {
			p.commit(best, runners, name, prev, deploymentID)
			return true, nil
		}
		// Every node was visited and none can take it now.
		metric, exhausted, found, err := p.revisit()
		if err != nil {
			return false, err
		}
		if found {
			continue
		}
		return p.r.preemptOrFail(p.tg, p.ask, exhausted, metric, name, prev, deploymentID)
	}
}

// commit places the allocation on best's node and re-scores the node.
func (p *placer) commit(best scored, runners []scored, name string, prev *structs.Allocation, deploymentID string) {
	r := p.r
	c := best.c
	c.bucket.remove(c.idx)
	p.held--
	a := r.newAllocation(p.tg, name, c.node, c.devices, c.ports, p.placementMetric(best, runners), deploymentID, prev)
	r.plan.AppendAlloc(a)
	r.placedOn(a)
	p.placed++
	countPlacement(p.props, c.node)
	if p.spread != nil {
		p.spread.add(c.bucket.key)
	}
	if p.scope != "" {
		return // distinct_hosts: the node is done
	}
	// Only this node's score changed: re-score it.
	next, _, err := p.evaluate(c.node, &structs.AllocMetric{})
	if err != nil {
		r.err = err
		return
	}
	if next != nil {
		c.bucket.push(next)
		p.held++
	}
}

// revisit checks every node again, as it stands now, when no candidate
// is left: for the metric of a failure, which reflects every node, and
// for room that appeared since a node was visited (an allocation
// preempted there). found reports that candidates were kept.
func (p *placer) revisit() (metric *structs.AllocMetric, exhausted []*structs.Node, found bool, err error) {
	r := p.r
	metric = r.freshMetric()
	for i := range p.order.len() {
		node := p.order.at(i)
		if i%256 == 255 {
			if err := r.interrupted(); err != nil {
				return nil, nil, false, err
			}
		}
		c, full, err := p.evaluate(node, metric)
		if err != nil {
			return nil, nil, false, err
		}
		if c != nil {
			p.keep(node, c)
			found = true
		}
		if full {
			exhausted = append(exhausted, node)
		}
	}
	return metric, exhausted, found, nil
}

// placeOn places one allocation of the group on node, or records why it
// cannot go there (system jobs: one allocation per node).
func (p *placer) placeOn(node *structs.Node, name string, prev *structs.Allocation) error {
	r := p.r
	if err := r.interrupted(); err != nil {
		return err
	}
	metric := r.freshMetric()
	c, full, err := p.evaluate(node, metric)
	if err != nil {
		return err
	}
	if c == nil {
		var exhausted []*structs.Node
		if full {
			exhausted = []*structs.Node{node}
		}
		_, err := r.preemptOrFail(p.tg, p.ask, exhausted, metric, name, prev, "")
		return err
	}
	s := scored{c: c, total: c.partial}
	if penalized := r.penalizedNodes(prev); penalized[node.ID] {
		s.penalty = nodeReschedulePenalty
		s.total -= s.penalty
	}
	metric.ScoreMetaData = []*structs.NodeScoreMeta{scoreMeta(s, p)}
	a := r.newAllocation(p.tg, name, node, c.devices, c.ports, metric, "", prev)
	r.plan.AppendAlloc(a)
	r.placedOn(a)
	countPlacement(p.props, node)
	return nil
}

// blocked returns why distinct_property keeps the group off node ("" when
// it does not).
func (p *placer) blocked(node *structs.Node) string { return propertyBlocks(p.props, node) }

// placementMetric returns the metric of a placement: the visited nodes'
// counts, shared with the group's other placements until a visit changes
// them, and the scores of the chosen node and the runners-up.
func (p *placer) placementMetric(best scored, runners []scored) *structs.AllocMetric {
	if p.snapshot == nil {
		s := p.r.freshMetric()
		s.NodesEvaluated = p.metric.NodesEvaluated
		s.NodesFiltered = p.metric.NodesFiltered
		s.NodesExhausted = p.metric.NodesExhausted
		s.ClassFiltered = cloneCounts(p.metric.ClassFiltered)
		s.ConstraintFiltered = cloneCounts(p.metric.ConstraintFiltered)
		s.ClassExhausted = cloneCounts(p.metric.ClassExhausted)
		s.DimensionExhausted = cloneCounts(p.metric.DimensionExhausted)
		p.snapshot = s
	}
	m := *p.snapshot
	m.ScoreMetaData = make([]*structs.NodeScoreMeta, 0, 1+len(runners))
	m.ScoreMetaData = append(m.ScoreMetaData, scoreMeta(best, p))
	for _, s := range runners {
		m.ScoreMetaData = append(m.ScoreMetaData, scoreMeta(s, p))
	}
	return &m
}

// scoreMeta renders one node's scores.
func scoreMeta(s scored, p *placer) *structs.NodeScoreMeta {
	scores := map[string]float64{structs.ScorerBinPack: s.c.binpack}
	if p.devices {
		scores[structs.ScorerDevices] = s.c.devScore
	}
	if p.affinity != nil {
		scores[structs.ScorerNodeAffinity] = s.c.affinity
	}
	if p.spread != nil {
		scores[structs.ScorerSpread] = s.spread
	}
	if s.penalty != 0 {
		scores[structs.ScorerReschedulePenalty] = -s.penalty
	}
	return &structs.NodeScoreMeta{NodeID: s.c.node.ID, Scores: scores, NormScore: s.total}
}

func cloneCounts(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
