package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	promsink "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Defaults of the telemetry block, as Nomad's.
const (
	// DefaultCollectionInterval is how often the gauges are sampled.
	DefaultCollectionInterval = time.Second
	// inmemInterval and inmemRetain are the in-memory sink's aggregation
	// interval and how long it keeps finished intervals: GET /v1/metrics
	// shows the last finished interval.
	inmemInterval = 10 * time.Second
	inmemRetain   = time.Minute
	// promExpiration is how long a Prometheus series lives after its last
	// update: the series of a stopped allocation disappear after it.
	promExpiration = time.Minute
	// serviceName prefixes every key, as Nomad's ("nomad.client...").
	serviceName = "nomad"
)

// Config is the agent's telemetry block (docs/metrics.md).
type Config struct {
	// CollectionInterval is how often the gauges (runtime, host,
	// allocations, server) are sampled; 0 means DefaultCollectionInterval.
	CollectionInterval time.Duration
	// DisableHostname leaves the hostname out of gauge names; by default
	// a gauge is nomad.<hostname>.<key>, as Nomad's.
	DisableHostname bool
	// UseNodeName puts the node name (NodeName) in gauge names instead of
	// the hostname, even with DisableHostname.
	UseNodeName bool
	// NodeName is the agent's name, for UseNodeName.
	NodeName string
	// PrometheusMetrics serves /v1/metrics?format=prometheus.
	PrometheusMetrics bool
	// PublishAllocationMetrics samples every running task's resource use
	// at each collection (nomad.client.allocs.*).
	PublishAllocationMetrics bool
	// PublishNodeMetrics samples the host (nomad.client.host.*) and the
	// node's allocation counts (nomad.client.allocations.*).
	PublishNodeMetrics bool
	// PrefixFilter allows ("+nomad.raft") or blocks ("-nomad.client")
	// metrics by key prefix.
	PrefixFilter []string
	// FilterDefault is whether a metric no filter names is kept; nil
	// means true.
	FilterDefault *bool
}

// Validate reports a setting that cannot work.
func (c *Config) Validate() error {
	if c.CollectionInterval < 0 {
		return fmt.Errorf("telemetry.collection_interval %s must not be negative", c.CollectionInterval)
	}
	for _, f := range c.PrefixFilter {
		if len(f) < 2 || (f[0] != '+' && f[0] != '-') {
			return fmt.Errorf("telemetry.prefix_filter entry %q must start with + (allow) or - (block), then a prefix such as nomad.raft", f)
		}
	}
	return nil
}

// Source is a set of gauges the collector samples at each collection.
type Source interface {
	// Collect sets the source's gauges on g. ctx ends when the
	// telemetry stops.
	Collect(ctx context.Context, g *Gauges)
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context, g *Gauges)

// Collect calls f.
func (f SourceFunc) Collect(ctx context.Context, g *Gauges) { f(ctx, g) }

// Gauges is where sources set their gauges.
type Gauges struct {
	m    *metrics.Metrics
	sink metrics.MetricSink
}

// Set sets a gauge named as Nomad names it: key under the "nomad" prefix
// (and the hostname unless disable_hostname).
func (g *Gauges) Set(key []string, val float32, labels ...metrics.Label) {
	g.m.SetGaugeWithLabels(key, val, labels)
}

// SetDrover sets one of drover's own gauges: "drover" then key, without
// the hostname.
func (g *Gauges) SetDrover(key []string, val float32, labels ...metrics.Label) {
	g.sink.SetGaugeWithLabels(append([]string{"drover"}, key...), val, labels)
}

// Telemetry holds the agent's metric sinks and samples its sources.
type Telemetry struct {
	cfg    Config
	logger *slog.Logger
	inmem  *metrics.InmemSink
	prom   *prometheus.Registry // nil unless PrometheusMetrics
	sink   metrics.MetricSink   // every sink
	m      *metrics.Metrics

	mu      sync.Mutex // guards the fields below
	sources []Source
	cancel  context.CancelFunc // set by Start
	done    chan struct{}      // closed when the collector returns
}

// New builds the sinks of cfg. It starts nothing: Start starts the
// collector.
func New(cfg Config, logger *slog.Logger) (*Telemetry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.CollectionInterval == 0 {
		cfg.CollectionInterval = DefaultCollectionInterval
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := &Telemetry{cfg: cfg, logger: logger, inmem: metrics.NewInmemSink(inmemInterval, inmemRetain)}
	sinks := metrics.FanoutSink{t.inmem}
	if cfg.PrometheusMetrics {
		t.prom = prometheus.NewRegistry()
		ps, err := promsink.NewPrometheusSinkFrom(promsink.PrometheusOpts{
			Expiration: promExpiration, Registerer: t.prom, Name: "drover"})
		if err != nil {
			return nil, fmt.Errorf("create the Prometheus sink: %w", err)
		}
		// The Go runtime and process collectors, as a Nomad agent's
		// Prometheus endpoint serves them (go_*, process_*).
		if err := errors.Join(
			t.prom.Register(collectors.NewGoCollector()),
			t.prom.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
		); err != nil {
			return nil, fmt.Errorf("register the Go runtime collectors: %w", err)
		}
		sinks = append(sinks, ps)
	}
	t.sink = sinks
	m, err := metrics.New(t.metricsConfig(), t.sink)
	if err != nil {
		return nil, fmt.Errorf("create metrics: %w", err)
	}
	t.m = m
	return t, nil
}

// metricsConfig is the go-metrics configuration of t's telemetry block.
// Runtime metrics are off there: go-metrics would sample them in a
// goroutine nothing stops; the collector emits them instead.
func (t *Telemetry) metricsConfig() *metrics.Config {
	c := metrics.DefaultConfig(serviceName)
	c.EnableRuntimeMetrics = false
	c.EnableHostname = !t.cfg.DisableHostname
	if t.cfg.UseNodeName && t.cfg.NodeName != "" {
		c.HostName = t.cfg.NodeName
		c.EnableHostname = true
	}
	if c.HostName == "" {
		c.HostName, _ = os.Hostname()
	}
	c.ProfileInterval = t.cfg.CollectionInterval
	c.FilterDefault = t.cfg.FilterDefault == nil || *t.cfg.FilterDefault
	for _, f := range t.cfg.PrefixFilter {
		prefix := strings.TrimSpace(f[1:])
		if f[0] == '+' {
			c.AllowedPrefixes = append(c.AllowedPrefixes, prefix)
		} else {
			c.BlockedPrefixes = append(c.BlockedPrefixes, prefix)
		}
	}
	return c
}

// Metrics returns the metrics instance that names keys as Nomad does, for
// timers and counters (the server's plan timers).
func (t *Telemetry) Metrics() *metrics.Metrics { return t.m }

// InstallGlobal makes t go-metrics' process-wide default, which
// hashicorp/raft emits to (nomad.raft.*). One process runs one agent; in
// a test process running several, the last one installed gets raft's
// metrics.
func (t *Telemetry) InstallGlobal() error {
	if _, err := metrics.NewGlobal(t.metricsConfig(), t.sink); err != nil {
		return fmt.Errorf("install the process-wide metrics: %w", err)
	}
	return nil
}

// AddSource adds a source of gauges; sources added after Start are
// sampled from the next collection on.
func (t *Telemetry) AddSource(s Source) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sources = append(t.sources, s)
}

// Config returns the telemetry block t was built from, with its defaults
// filled in.
func (t *Telemetry) Config() Config { return t.cfg }

// Start starts the collector: it samples every source now, then every
// collection_interval until Stop.
func (t *Telemetry) Start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.done = make(chan struct{})
	go t.run(ctx, t.done)
}

// Stop stops the collector and waits for it; it is idempotent.
func (t *Telemetry) Stop() {
	t.mu.Lock()
	cancel, done := t.cancel, t.done
	t.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (t *Telemetry) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	ticker := time.NewTicker(t.cfg.CollectionInterval)
	defer ticker.Stop()
	for {
		t.Collect(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Collect samples the runtime and every source once. The collector calls
// it; a benchmark or a test may call it directly.
func (t *Telemetry) Collect(ctx context.Context) {
	t.m.EmitRuntimeStats()
	t.mu.Lock()
	sources := append([]Source(nil), t.sources...)
	t.mu.Unlock()
	g := &Gauges{m: t.m, sink: t.sink}
	for _, s := range sources {
		if ctx.Err() != nil {
			return
		}
		s.Collect(ctx, g)
	}
}

// Summary returns the body of GET /v1/metrics: the in-memory sink's last
// finished interval (Timestamp, Gauges, Points, Counters, Samples).
func (t *Telemetry) Summary() (any, error) {
	return t.inmem.DisplayMetrics(nil, nil)
}

// PrometheusHandler serves the Prometheus text exposition; nil unless
// prometheus_metrics is set.
func (t *Telemetry) PrometheusHandler() http.Handler {
	if t.prom == nil {
		return nil
	}
	return promhttp.HandlerFor(t.prom, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
