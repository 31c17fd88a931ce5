package logmonitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// next returns the subscription's next line, failing when none is queued.
func next(t *testing.T, s *Subscription) string {
	t.Helper()
	select {
	case l := <-s.Lines():
		return string(l)
	default:
		t.Fatal("no line queued")
		return ""
	}
}

func empty(t *testing.T, s *Subscription) {
	t.Helper()
	select {
	case l := <-s.Lines():
		t.Fatalf("unexpected line %q", l)
	default:
	}
}

func TestMonitorLevelsAndBase(t *testing.T) {
	var base bytes.Buffer
	m := New()
	logger := slog.New(m.Handler(slog.NewTextHandler(&base, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if logger.Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("debug enabled without a subscriber asking for it")
	}
	debug := m.Subscribe(Options{Level: slog.LevelDebug})
	defer debug.Close()
	warn := m.Subscribe(Options{Level: slog.LevelWarn})
	logger.Debug("fine detail", "component", "http", "path", "/v1/agent/self")
	logger.Warn("careful")

	if got := next(t, debug); !strings.Contains(got, "[DEBUG] http: fine detail: path=/v1/agent/self\n") {
		t.Errorf("debug subscriber got %q", got)
	}
	if got := next(t, debug); !strings.Contains(got, "[WARN] careful\n") {
		t.Errorf("debug subscriber got %q", got)
	}
	if got := next(t, warn); !strings.Contains(got, "[WARN] careful") {
		t.Errorf("warn subscriber got %q", got)
	}
	empty(t, warn)
	if strings.Contains(base.String(), "fine detail") || !strings.Contains(base.String(), "careful") {
		t.Errorf("base handler got %q: want only what its level allows", base.String())
	}

	warn.Close()
	debug.Close()
	debug.Close()
	if logger.Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("debug still enabled after the subscribers left")
	}
}

func TestMonitorFormats(t *testing.T) {
	m := New()
	logger := slog.New(m.Handler(slog.DiscardHandler)).With("component", "client", "node_id", "n1").WithGroup("alloc")
	text := m.Subscribe(Options{Level: slog.LevelInfo})
	defer text.Close()
	js := m.Subscribe(Options{Level: slog.LevelInfo, JSON: true, IncludeLocation: true})
	defer js.Close()
	logger.Info("task started", "id", "a1", "reason", "a b", "took", 1500*time.Millisecond, "err", errors.New("boom"))

	got := next(t, text)
	want := `[INFO] client: task started: node_id=n1 alloc.id=a1 alloc.reason="a b" alloc.took=1.5s alloc.err=boom` + "\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("text line %q, want it to end with %q", got, want)
	}
	if _, err := time.Parse(timeFormat, strings.Fields(got)[0]); err != nil {
		t.Errorf("text line's time: %v", err)
	}

	var obj map[string]any
	line := next(t, js)
	if err := json.Unmarshal([]byte(line), &obj); err != nil {
		t.Fatalf("JSON line %q: %v", line, err)
	}
	for k, v := range map[string]any{"@level": "info", "@module": "client", "@message": "task started", "node_id": "n1",
		"alloc.id": "a1", "alloc.took": "1.5s", "alloc.err": "boom"} {
		if obj[k] != v {
			t.Errorf("JSON %s = %v, want %v (line %s)", k, obj[k], v, line)
		}
	}
	if c, _ := obj["@caller"].(string); !strings.Contains(c, "monitor_test.go:") {
		t.Errorf("JSON @caller = %q, want this file", c)
	}
}

// A subscriber that does not read loses lines, never blocks the logger,
// and learns how many it lost.
func TestMonitorDropsForSlowSubscriber(t *testing.T) {
	m := New()
	logger := slog.New(m.Handler(slog.DiscardHandler))
	slow := m.Subscribe(Options{Level: slog.LevelInfo, Buffer: 2})
	defer slow.Close()
	for i := range 10 {
		logger.Info("line", "i", i)
	}
	select {
	case <-slow.Drops():
	default:
		t.Fatal("no drop signalled")
	}
	if got := slow.TakeDropped(); got != 8 {
		t.Fatalf("dropped %d, want 8", got)
	}
	notice := string(slow.DroppedNotice(8, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	if want := "2026-01-02T03:04:05.000Z [WARN] monitor: log lines dropped: the reader did not keep up: dropped=8\n"; notice != want {
		t.Errorf("notice %q, want %q", notice, want)
	}
	if got := slow.TakeDropped(); got != 0 {
		t.Fatalf("dropped again %d, want 0 after taking", got)
	}
	if got := next(t, slow); !strings.Contains(got, "i=0") {
		t.Fatalf("first kept line %q", got)
	}
}

func TestParseLevel(t *testing.T) {
	cases := map[string]slog.Level{"TRACE": LevelTrace, "debug": slog.LevelDebug, "Info": slog.LevelInfo, "": slog.LevelInfo,
		"warn": slog.LevelWarn, "WARNING": slog.LevelWarn, "error": slog.LevelError}
	for in, want := range cases {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseLevel("loud"); err == nil || !strings.Contains(err.Error(), "trace, debug") {
		t.Errorf("ParseLevel(loud) = %v", err)
	}
}

// Loggers and subscribers come and go concurrently (run with -race).
func TestMonitorConcurrent(t *testing.T) {
	m := New()
	logger := slog.New(m.Handler(slog.DiscardHandler))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			logger.Debug("busy", "i", i)
		}
	}()
	for range 50 {
		s := m.Subscribe(Options{Level: slog.LevelDebug, Buffer: 1})
		s.Close()
	}
	<-done
	if logger.Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("debug enabled after every subscriber left")
	}
}
