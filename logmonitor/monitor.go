package logmonitor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBuffer is how many formatted lines a subscriber's buffer holds.
const DefaultBuffer = 512

// LevelTrace is Nomad's TRACE level, below slog's DEBUG.
const LevelTrace = slog.LevelDebug - 4

// noSubscriber is the minimum level while nobody subscribes: above every
// level, so that no record is formatted for nobody.
const noSubscriber = slog.Level(1 << 30)

// Monitor fans the records of the loggers made with its Handler out to
// subscribers, each at its own level and format. It never blocks a logger:
// a subscriber whose buffer is full loses the line, and counts it.
type Monitor struct {
	mu   sync.Mutex // guards the field below; subs is replaced, not changed
	subs []*Subscription

	// current is subs as the loggers read it, without the lock.
	current atomic.Pointer[[]*Subscription]
	// min is the lowest level any subscriber wants (noSubscriber: none).
	min atomic.Int64
}

// New returns a Monitor without subscribers.
func New() *Monitor {
	m := &Monitor{}
	m.min.Store(int64(noSubscriber))
	return m
}

// Options says what a subscriber wants.
type Options struct {
	// Level is the lowest level sent.
	Level slog.Level
	// JSON formats lines as JSON objects; otherwise as text,
	// "<time> [LEVEL] <component>: <message>: key=value ...".
	JSON bool
	// IncludeLocation adds the caller's file and line.
	IncludeLocation bool
	// Buffer is how many lines may wait for the subscriber (0:
	// DefaultBuffer).
	Buffer int
}

// Subscription is one subscriber's stream of formatted lines.
type Subscription struct {
	m     *Monitor
	opts  Options
	lines chan []byte
	// drops is signalled (without blocking) when a line is dropped.
	drops   chan struct{}
	dropped atomic.Uint64
	once    sync.Once
}

// Subscribe adds a subscriber; it must Close the subscription.
func (m *Monitor) Subscribe(opts Options) *Subscription {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	s := &Subscription{m: m, opts: opts, lines: make(chan []byte, opts.Buffer), drops: make(chan struct{}, 1)}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setSubs(append(m.subs[:len(m.subs):len(m.subs)], s))
	return s
}

// setSubs publishes subs and the minimum level. Called with mu held.
func (m *Monitor) setSubs(subs []*Subscription) {
	m.subs = subs
	m.current.Store(&subs)
	min := noSubscriber
	for _, s := range subs {
		if s.opts.Level < min {
			min = s.opts.Level
		}
	}
	m.min.Store(int64(min))
}

// Lines returns the subscriber's lines, each ending in a newline. It is
// never closed: stop reading once done with the subscription.
func (s *Subscription) Lines() <-chan []byte { return s.lines }

// TakeDropped returns how many lines were dropped since the last call,
// because the buffer was full.
func (s *Subscription) TakeDropped() uint64 { return s.dropped.Swap(0) }

// Drops is signalled when a line has been dropped since the signal was
// last received, so that a reader can report the loss (TakeDropped)
// without waiting for the next line. It is never closed.
func (s *Subscription) Drops() <-chan struct{} { return s.drops }

// DroppedNotice returns a warning line, in the subscriber's format, saying
// that n lines were lost.
func (s *Subscription) DroppedNotice(n uint64, now time.Time) []byte {
	r := slog.NewRecord(now, slog.LevelWarn, "log lines dropped: the reader did not keep up", 0)
	r.AddAttrs(slog.String(componentKey, "monitor"), slog.Uint64("dropped", n))
	var enc encodings
	return enc.get(&handler{m: s.m}, r, s.opts)
}

// Close removes the subscriber. It is safe to call more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		m := s.m
		m.mu.Lock()
		defer m.mu.Unlock()
		subs := make([]*Subscription, 0, len(m.subs))
		for _, o := range m.subs {
			if o != s {
				subs = append(subs, o)
			}
		}
		m.setSubs(subs)
	})
}

// wants reports whether some subscriber wants records of level l.
func (m *Monitor) wants(l slog.Level) bool { return int64(l) >= m.min.Load() }

// publish formats r for every subscriber that wants it and queues it
// without blocking.
func (m *Monitor) publish(h *handler, r slog.Record) {
	subs := m.current.Load()
	if subs == nil {
		return
	}
	var enc encodings
	for _, s := range *subs {
		if r.Level < s.opts.Level {
			continue
		}
		line := enc.get(h, r, s.opts)
		select {
		case s.lines <- line:
		default:
			s.dropped.Add(1)
			select {
			case s.drops <- struct{}{}:
			default:
			}
		}
	}
}

// Handler returns a slog.Handler that passes every record to base (as base
// would handle it alone) and to the Monitor's subscribers: a logger made
// with it is enabled at a level when base is or when a subscriber wants
// it.
func (m *Monitor) Handler(base slog.Handler) slog.Handler {
	return &handler{m: m, base: base}
}

// handler is the Monitor's slog.Handler. attrs are the logger's own
// attributes with their group prefixes; group is the open groups'
// prefix ("a.b.").
type handler struct {
	m     *Monitor
	base  slog.Handler
	attrs []slog.Attr
	group string
}

// Enabled reports whether base or a subscriber wants level l.
func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.m.wants(l) || h.base.Enabled(ctx, l)
}

// Handle passes r to base (when base wants it) and to the subscribers.
func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.base.Enabled(ctx, r.Level) {
		err = h.base.Handle(ctx, r)
	}
	if h.m.wants(r.Level) {
		h.m.publish(h, r)
	}
	return err
}

// WithAttrs returns the handler with attrs added to every record.
func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := &handler{m: h.m, base: h.base.WithAttrs(attrs), group: h.group}
	out.attrs = append(h.attrs[:len(h.attrs):len(h.attrs)], prefixed(h.group, attrs)...)
	return out
}

// WithGroup returns the handler with later attributes in group name.
func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{m: h.m, base: h.base.WithGroup(name), attrs: h.attrs, group: h.group + name + "."}
}

// prefixed returns attrs with their keys prefixed, groups flattened.
func prefixed(prefix string, attrs []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		a.Value = a.Value.Resolve()
		if a.Value.Kind() == slog.KindGroup {
			p := prefix
			if a.Key != "" {
				p += a.Key + "."
			}
			out = append(out, prefixed(p, a.Value.Group())...)
			continue
		}
		if a.Key == "" {
			continue
		}
		a.Key = prefix + a.Key
		out = append(out, a)
	}
	return out
}

// ParseLevel parses a log level as Nomad names them: trace, debug, info,
// warn (or warning), error, in any case.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "trace":
		return LevelTrace, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error", "err":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q: use trace, debug, info, warn or error", s)
}
