package events

import (
	"context"
	"errors"
	"sync"

	"github.com/drover-io/drover/structs"
)

// DefaultBufferSize is how many batches a Broker keeps.
const DefaultBufferSize = 4096

// ErrLagged is Next's error once the subscriber fell more than the
// buffer's size behind: the batches it had not read are gone.
var ErrLagged = errors.New("the event stream subscriber fell too far behind and was dropped; resubscribe with index= to resume from the oldest buffered event")

// Broker keeps the latest batches in a ring and hands them to
// subscribers. Its zero value is not usable: use NewBroker.
type Broker struct {
	size int

	mu sync.Mutex // guards the fields below
	// ring holds batch number seq at ring[seq%size]; next is the number
	// of the next batch published, so the buffer holds the batches
	// max(0, next-size) .. next-1.
	ring []structs.StreamEvents
	next uint64
	// published is closed (and replaced) at each Publish.
	published chan struct{}
}

// NewBroker returns a broker keeping the last size batches (size <= 0:
// DefaultBufferSize).
func NewBroker(size int) *Broker {
	if size <= 0 {
		size = DefaultBufferSize
	}
	return &Broker{size: size, ring: make([]structs.StreamEvents, size), published: make(chan struct{})}
}

// Publish adds a batch and wakes the subscribers. It never blocks on them.
func (b *Broker) Publish(batch structs.StreamEvents) {
	if len(batch.Events) == 0 {
		return
	}
	b.mu.Lock()
	b.ring[b.next%uint64(b.size)] = batch
	b.next++
	close(b.published)
	b.published = make(chan struct{})
	b.mu.Unlock()
}

// Subscribe starts reading at the first buffered batch whose index is at
// least index: with index 0 (or one older than the buffer) at the oldest
// buffered batch, as Nomad's event stream does; with an index past the
// buffer at the next batch published. What it
// reads is filtered by topics (topic -> keys; the key "*" or no key
// matches every event of the topic; the topic "*" every topic) and
// namespace ("" or "*": every namespace).
func (b *Broker) Subscribe(index uint64, topics map[string][]string, namespace string) *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &Subscription{b: b, topics: topics, namespace: namespace, seq: b.next}
	for seq := b.oldest(); seq < b.next; seq++ {
		if b.ring[seq%uint64(b.size)].Index >= index {
			s.seq = seq
			break
		}
	}
	return s
}

// oldest is the number of the oldest buffered batch; b.mu must be held.
func (b *Broker) oldest() uint64 {
	if b.next > uint64(b.size) {
		return b.next - uint64(b.size)
	}
	return 0
}

// Subscription reads batches from a Broker; one goroutine uses it.
type Subscription struct {
	b         *Broker
	topics    map[string][]string
	namespace string
	seq       uint64 // the number of the next batch to read
}

// Next returns the next batch with an event the subscription matches
// (only those events), waiting for one until ctx ends. It returns
// ErrLagged once the batches it had to read left the buffer.
func (s *Subscription) Next(ctx context.Context) (structs.StreamEvents, error) {
	for {
		s.b.mu.Lock()
		if s.seq < s.b.oldest() {
			s.b.mu.Unlock()
			return structs.StreamEvents{}, ErrLagged
		}
		if s.seq == s.b.next {
			wait := s.b.published
			s.b.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return structs.StreamEvents{}, ctx.Err()
			}
		}
		batch := s.b.ring[s.seq%uint64(s.b.size)]
		s.seq++
		s.b.mu.Unlock()
		if out := s.filter(batch); len(out.Events) > 0 {
			return out, nil
		}
	}
}

// filter returns the events of batch the subscription matches.
func (s *Subscription) filter(batch structs.StreamEvents) structs.StreamEvents {
	out := structs.StreamEvents{Index: batch.Index}
	for _, e := range batch.Events {
		if s.matches(e) {
			out.Events = append(out.Events, e)
		}
	}
	return out
}

func (s *Subscription) matches(e structs.StreamEvent) bool {
	if s.namespace != "" && s.namespace != "*" && e.Namespace != "" && e.Namespace != s.namespace {
		return false
	}
	keys, ok := s.topics[e.Topic]
	if !ok {
		keys, ok = s.topics[structs.TopicAll]
	}
	if !ok {
		return false
	}
	if len(keys) == 0 {
		return true
	}
	for _, k := range keys {
		if k == "*" || k == e.Key {
			return true
		}
		for _, fk := range e.FilterKeys {
			if k == fk {
				return true
			}
		}
	}
	return false
}
