package scheduler

import (
	"strings"

	"github.com/drover-io/drover/structs"
)

// Spreads (the spread blocks of the job and the group) distribute a
// group's allocations over the values a node attribute takes. Each spread
// gives every value a desired count: the group's count times the value's
// target percent; the values no target names share, as one implicit
// target, what the percents leave of 100; without targets, every value
// the group's nodes with room have gets an equal share. A node's boost for
// one spread is how many allocations its value still lacks, clamped to
// [-1, 1]: 1 while it lacks one or more, a fraction when it lacks part of
// one, 0 when it has its share, and below 0 when it has more (-1/2 one
// more, -2/3 two more, ...); -1 when its share is zero or the node lacks
// the attribute. The spread score is the sum of the boosts weighted by
// each spread's weight over the total weight, in [-1, 1], added to the
// node's other scores.
//
// The counts are the group's allocations that stay (existing ones that
// are not terminal and not stopped by the plan) and the plan's
// placements, kept up to date as each placement is made; nothing is
// recounted per candidate node. Because the boost saturates at one
// allocation, a value below its share beats a value at its share whatever
// their bin-packing scores, so the shares are met within one allocation
// per value whenever the feasible nodes have room, and bin-packing
// decides among the nodes of the values that most lack allocations.

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
	others  float64 // desired count of the values targets do not name
	// values: the values of the nodes that had room for the group when
	// visited (an even spread's set).
	values     map[string]bool
	used       map[string]int
	usedOthers int // allocations on values targets do not name
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
	if job.Type == structs.JobTypeSystem {
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
				spec.targets[t.Value] = float64(t.Percent) / 100 * s.count
				sum += t.Percent
			}
			spec.others = float64(max(100-sum, 0)) / 100 * s.count
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
// group: their values join the even spreads' sets.
func (s *spreadScorer) feasible(k spreadKey) {
	for i, spec := range s.specs {
		if k.has[i] {
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
		if spec.targets != nil {
			if _, named := spec.targets[k.vals[i]]; !named {
				spec.usedOthers++
			}
		}
	}
}

// score returns the spread score of placing one more allocation on a node
// with key k, in [-1, 1].
func (s *spreadScorer) score(k spreadKey) float64 {
	var sum float64
	for i, spec := range s.specs {
		sum += spec.weight * spec.boost(k.vals[i], k.has[i], s.count)
	}
	return sum
}

// boost is how much value v still lacks of its desired count, in [-1, 1].
func (spec *spreadSpec) boost(v string, has bool, count float64) float64 {
	if !has {
		return -1
	}
	var desired, used float64
	switch {
	case spec.targets == nil:
		desired = count / float64(max(len(spec.values), 1))
		used = float64(spec.used[v])
	default:
		t, named := spec.targets[v]
		if named {
			desired, used = t, float64(spec.used[v])
		} else {
			desired, used = spec.others, float64(spec.usedOthers)
		}
	}
	if desired <= 0 {
		return -1
	}
	lack := desired - used
	if lack >= 0 {
		return min(1, lack)
	}
	// Over its share: still less the further over, so that what the
	// shares cannot take is spread too, but never below -1.
	return lack / (1 - lack)
}
