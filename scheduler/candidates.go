package scheduler

import (
	"hash/fnv"

	"github.com/drover-io/drover/structs"
)

// Candidates and the heaps that rank them (see placer.go).

// candidate is a node that can take one more allocation of the group.
type candidate struct {
	node     *structs.Node
	binpack  float64
	devScore float64
	affinity float64
	partial  float64 // every score but spread and reschedule penalty
	tie      uint64  // breaks ties between equal scores (tieKey)
	devices  map[string][]*structs.AllocatedDeviceResource
	ports    *portAssignment // ports.go
	bucket   *bucket
	idx      int // in bucket.heap
}

// better orders candidates: higher score, then lower tie key, then lower
// node ID.
func better(aScore float64, a *candidate, bScore float64, b *candidate) bool {
	if aScore != bScore {
		return aScore > bScore
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.node.ID < b.node.ID
}

// tieSeed returns the seed of an evaluation's tie keys: a hash of its ID.
func tieSeed(evalID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(evalID))
	return h.Sum64()
}

// tieKey ranks a node among the nodes of equal score for the evaluation
// whose tie seed is seed. Equal nodes are thus ranked in an order of the
// evaluation's own: concurrent evaluations of different jobs (a follower's
// workers schedule on state a little behind the leader's) spread their
// choices over the equal nodes instead of all taking the same one, whose
// plans the plan applier would reject but for the first; the same
// evaluation ranks them the same way every time.
func tieKey(seed uint64, nodeID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(nodeID))
	// splitmix64's finalizer, so that every bit of the seed moves every
	// bit of the key.
	x := h.Sum64() ^ seed
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// bucket holds the candidates of one combination of spread values.
type bucket struct {
	key  spreadKey
	heap []*candidate
}

func (b *bucket) less(i, j int) bool {
	return better(b.heap[i].partial, b.heap[i], b.heap[j].partial, b.heap[j])
}

func (b *bucket) swap(i, j int) {
	b.heap[i], b.heap[j] = b.heap[j], b.heap[i]
	b.heap[i].idx, b.heap[j].idx = i, j
}

func (b *bucket) push(c *candidate) {
	c.bucket, c.idx = b, len(b.heap)
	b.heap = append(b.heap, c)
	b.up(c.idx)
}

// remove takes the candidate at index i out of the heap.
func (b *bucket) remove(i int) {
	last := len(b.heap) - 1
	if i != last {
		b.swap(i, last)
	}
	b.heap[last] = nil
	b.heap = b.heap[:last]
	if i != last {
		b.down(i)
		b.up(i)
	}
}

func (b *bucket) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !b.less(i, p) {
			return
		}
		b.swap(i, p)
		i = p
	}
}

func (b *bucket) down(i int) {
	n := len(b.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && b.less(r, l) {
			m = r
		}
		if !b.less(m, i) {
			return
		}
		b.swap(i, m)
		i = m
	}
}
