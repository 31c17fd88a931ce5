package scheduler

import "github.com/drover-io/drover/structs"

// Candidates and the heaps that rank them (see placer.go).

// candidate is a node that can take one more allocation of the group.
type candidate struct {
	node     *structs.Node
	binpack  float64
	devScore float64
	affinity float64
	partial  float64 // every score but spread and reschedule penalty
	devices  map[string][]*structs.AllocatedDeviceResource
	ports    *portAssignment // ports.go
	bucket   *bucket
	idx      int // in bucket.heap
}

// better orders candidates: higher score, then lower node ID.
func better(aScore float64, a *structs.Node, bScore float64, b *structs.Node) bool {
	if aScore != bScore {
		return aScore > bScore
	}
	return a.ID < b.ID
}

// bucket holds the candidates of one combination of spread values.
type bucket struct {
	key  spreadKey
	heap []*candidate
}

func (b *bucket) less(i, j int) bool {
	return better(b.heap[i].partial, b.heap[i].node, b.heap[j].partial, b.heap[j].node)
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
