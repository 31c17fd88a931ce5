package scheduler

import (
	"math"
	"strings"

	"github.com/drover-io/drover/structs"
)

// Spreads (the spread blocks of the job and the group) distribute a
// group's allocations over the values a node attribute takes. Each spread
// gives every value a desired count: the group's count times the value's
// target percent; the values no target names (the implicit target) share
// what the percents leave of 100 equally; without targets, every value
// shares the whole count equally. The values that share are those of the
// nodes that had room for the group when visited.
//
// A node's boost for one spread ranks its value in levels one apart, so
// that bin-packing (in [0, 1]) decides only within a level: 1 while the
// value lacks a whole allocation (fewer than the floor of its share); 0
// while it only lacks the fraction of one (a share of 12.04 at 12: one
// value among those gets the 13th); -1 at its share (or above the fraction),
// sinking towards -2 the further over it is, so that what the shares
// cannot take is spread too; -2 on a node without the attribute. A share
// of zero is full at once. The spread score is the sum of the boosts
// weighted by each spread's weight over the total weight, in [-2, 1],
// added to the node's other scores. With one spread, the shares are thus
// met within one allocation per value wherever the nodes have room.
//
// The counts are the group's allocations that stay (existing ones that
// are not terminal and not stopped by the plan) and the plan's
// placements, kept up to date as each placement is made; nothing is
// recounted per candidate node.

// Spread boosts (see above).
const (
	boostLacking  = 1.0
	boostFraction = 0.0
	boostFull     = -1.0
	boostMissing  = -2.0
)

// spreadScorer scores nodes by one group's spreads.
type spreadScorer struct {
	count float64 // the group's desired count
	specs []*spreadSpec
}

// spreadSpec is one spread and the use of its attribute's values.
type spreadSpec struct {
	attribute string
	weight    float64 // this spread's share of the total weight
	// targets: desired count by value; nil for an even spread.
	targets map[string]float64
	others  float64 // desired count of the values targets do not name, together
	// values: the values of the nodes that had room for the group when
	// visited, that targets do not name (all of them without targets):
	// they share the count, or what the targets leave of it, evenly.
	values map[string]bool
	used   map[string]int
}

// spreadKey is a node's values for every spread of the group; it names
// the bucket the node is ranked in (placer.go).
type spreadKey struct {
	key  string
	vals []string
	has  []bool
}

// newSpreadScorer returns the scorer of tg's spreads (the job's, then the
// group's), or nil when there are none or the job is a system job (one
// allocation per node leaves nothing to spread).
func newSpreadScorer(job *structs.Job, tg *structs.TaskGroup) *spreadScorer {
	if job.Type == structs.JobTypeSystem || job.Type == structs.JobTypeSysBatch {
		return nil
	}
	spreads := append(append([]*structs.Spread(nil), job.Spreads...), tg.Spreads...)
	if len(spreads) == 0 {
		return nil
	}
	s := &spreadScorer{count: float64(tg.Count)}
	var total float64
	for _, sp := range spreads {
		total += float64(sp.Weight)
	}
	for _, sp := range spreads {
		spec := &spreadSpec{attribute: sp.Attribute, values: map[string]bool{}, used: map[string]int{}}
		if total > 0 {
			spec.weight = float64(sp.Weight) / total
		}
		if len(sp.SpreadTarget) > 0 {
			spec.targets = map[string]float64{}
			sum := 0
			for _, t := range sp.SpreadTarget {
				spec.targets[t.Value] = float64(t.Percent*tg.Count) / 100
				sum += t.Percent
			}
			spec.others = float64(max(100-sum, 0)*tg.Count) / 100
		}
		s.specs = append(s.specs, spec)
	}
	return s
}

// keyOf returns node's spread values.
func (s *spreadScorer) keyOf(node *structs.Node) spreadKey {
	k := spreadKey{vals: make([]string, len(s.specs)), has: make([]bool, len(s.specs))}
	for i, spec := range s.specs {
		k.vals[i], k.has[i] = resolveTarget(spec.attribute, node)
	}
	k.key = s.keyString(node)
	return k
}

// keyString returns the key of node's spread values, allocating nothing
// for a single spread over a set attribute.
func (s *spreadScorer) keyString(node *structs.Node) string {
	if len(s.specs) == 1 {
		if v, ok := resolveTarget(s.specs[0].attribute, node); ok {
			return v
		}
		return "\x01" // no value set: unlike any value
	}
	var b strings.Builder
	for i, spec := range s.specs {
		if i > 0 {
			b.WriteByte(0)
		}
		if v, ok := resolveTarget(spec.attribute, node); ok {
			b.WriteString(v)
		} else {
			b.WriteByte(1)
		}
	}
	return b.String()
}

// feasible records that nodes with key k can take an allocation of the
// group: their values join the sets that share a count evenly.
func (s *spreadScorer) feasible(k spreadKey) {
	for i, spec := range s.specs {
		if !k.has[i] {
			continue
		}
		if _, named := spec.targets[k.vals[i]]; !named {
			spec.values[k.vals[i]] = true
		}
	}
}

// add counts one allocation on a node with key k.
func (s *spreadScorer) add(k spreadKey) {
	for i, spec := range s.specs {
		if !k.has[i] {
			continue
		}
		spec.used[k.vals[i]]++
	}
}

// score returns the spread score of placing one more allocation on a node
// with key k, in [-2, 1].
func (s *spreadScorer) score(k spreadKey) float64 {
	var sum float64
	for i, spec := range s.specs {
		sum += spec.weight * spec.boost(k.vals[i], k.has[i], s.count)
	}
	return sum
}

// boost ranks value v by what it lacks of its desired count (see above).
func (spec *spreadSpec) boost(v string, has bool, count float64) float64 {
	if !has {
		return boostMissing
	}
	desired, named := spec.targets[v]
	switch {
	case named:
	case spec.targets == nil:
		desired = count / float64(max(len(spec.values), 1))
	default:
		desired = spec.others / float64(max(len(spec.values), 1))
	}
	used := float64(spec.used[v])
	const eps = 1e-9 // shares like 1000 * 30% are whole numbers
	floor, ceil := math.Floor(desired+eps), math.Ceil(desired-eps)
	switch {
	case used < floor:
		return boostLacking
	case used < ceil:
		return boostFraction
	}
	// At or over its share: the further over, the lower, so that what
	// the shares cannot take is spread too.
	over := used - ceil
	return boostFull - over/(over+1)
}
