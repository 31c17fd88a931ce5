package allocrunner

import (
	"sync"

	"github.com/drover-io/drover/structs"
)

// AllocBroadcaster sends versions of an allocation to listeners. A
// listener always gets the latest version: a version it has not read yet
// is replaced, so no listener ever has a queue. It is safe for concurrent use.
type AllocBroadcaster struct {
	mu        sync.Mutex // guards the fields below
	listeners map[int]*AllocListener
	nextID    int
	last      *structs.Allocation
	closed    bool
}

// NewAllocBroadcaster returns a broadcaster with no listeners.
func NewAllocBroadcaster() *AllocBroadcaster {
	return &AllocBroadcaster{listeners: make(map[int]*AllocListener)}
}

// AllocListener receives the latest versions of an allocation.
type AllocListener struct {
	ch chan *structs.Allocation
	id int
	b  *AllocBroadcaster
}

// Send delivers alloc to every listener, replacing a version not yet read.
// The allocation must not be mutated afterwards. Send after Close does nothing.
func (b *AllocBroadcaster) Send(alloc *structs.Allocation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.last = alloc
	for _, l := range b.listeners {
		l.offer(alloc)
	}
}

// offer replaces the pending value. b.mu must be held: it makes Send the
// only writer, so after the drain there is room.
func (l *AllocListener) offer(alloc *structs.Allocation) {
	select {
	case <-l.ch:
	default:
	}
	l.ch <- alloc
}

// Listen returns a new listener; it receives the latest version at once if
// one was sent. After Close, the listener's channel is closed.
func (b *AllocBroadcaster) Listen() *AllocListener {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := &AllocListener{ch: make(chan *structs.Allocation, 1), id: b.nextID, b: b}
	b.nextID++
	if b.closed {
		close(l.ch)
		return l
	}
	if b.last != nil {
		l.ch <- b.last
	}
	b.listeners[l.id] = l
	return l
}

// Close closes every listener's channel. It is idempotent.
func (b *AllocBroadcaster) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for id, l := range b.listeners {
		close(l.ch)
		delete(b.listeners, id)
	}
}

// Ch returns the channel the latest versions arrive on; it is closed when
// the listener or its broadcaster is closed.
func (l *AllocListener) Ch() <-chan *structs.Allocation { return l.ch }

// Close stops the listener and closes its channel.
func (l *AllocListener) Close() {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	if _, ok := l.b.listeners[l.id]; ok {
		delete(l.b.listeners, l.id)
		close(l.ch)
	}
}
