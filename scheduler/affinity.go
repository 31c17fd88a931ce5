package scheduler

import "github.com/drover-io/drover/structs"

// Node affinities (the affinity blocks of the job, the group and its
// tasks): a node's affinity score is the weight of the affinities it
// matches over the total weight of the group's affinities, so it lies in
// [-1, 1]: 1 when it matches every positive one and no negative one, -1
// the reverse. A match is judged as the constraint with the same
// attribute, operator and value would be. The score is a function of the
// node's attributes only, so it is computed once per computed class,
// unless an affinity reads a unique value.

// affinityScorer scores nodes by one group's affinities.
type affinityScorer struct {
	affinities []*structs.Affinity
	total      float64 // sum of |weight|
	unique     bool    // some affinity reads a unique value
	byClass    map[string]float64
}

// newAffinityScorer returns the scorer of tg's affinities, or nil when the
// job, the group and its tasks have none.
func newAffinityScorer(job *structs.Job, tg *structs.TaskGroup) *affinityScorer {
	as := append([]*structs.Affinity(nil), job.Affinities...)
	as = append(as, tg.Affinities...)
	for _, t := range tg.Tasks {
		as = append(as, t.Affinities...)
	}
	if len(as) == 0 {
		return nil
	}
	s := &affinityScorer{affinities: as, byClass: map[string]float64{}}
	for _, a := range as {
		w := float64(a.Weight)
		if w < 0 {
			w = -w
		}
		s.total += w
		s.unique = s.unique || readsUnique(a.LTarget) || readsUnique(a.RTarget)
	}
	return s
}

// score returns node's affinity score in [-1, 1].
func (s *affinityScorer) score(r *run, node *structs.Node) float64 {
	if s.total == 0 {
		return 0
	}
	class := ""
	if !s.unique {
		class = r.classOf(node)
		if v, ok := s.byClass[class]; ok {
			return v
		}
	}
	var sum float64
	for _, a := range s.affinities {
		c := structs.Constraint{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand}
		if r.checker.meets(&c, node) {
			sum += float64(a.Weight)
		}
	}
	v := sum / s.total
	if !s.unique {
		s.byClass[class] = v
	}
	return v
}
