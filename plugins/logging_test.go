package plugins

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"testing"
)

// captureHandler records the records it handles.
type captureHandler struct {
	mu      sync.Mutex // guards the field below
	records []captured
}

type captured struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *captureHandler) WithGroup(string) slog.Handler            { return h }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	c := captured{level: r.Level, msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		c.attrs[a.Key] = a.Value.Any()
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, c)
	h.mu.Unlock()
	return nil
}

func TestSlogWriter(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   []captured
	}{
		{"slog json", []string{`{"time":"2026-01-01T00:00:00Z","level":"WARN","msg":"disk full","task":"web","n":3}` + "\n"},
			[]captured{{slog.LevelWarn, "disk full", map[string]any{"task": "web", "n": float64(3)}}}},
		{"hclog json", []string{`{"@level":"error","@message":"boom","@timestamp":"x","@module":"plugin"}` + "\n"},
			[]captured{{slog.LevelError, "boom", map[string]any{"@module": "plugin"}}}},
		{"split line", []string{`{"level":"DEBUG",`, `"msg":"hi"}`, "\n"},
			[]captured{{slog.LevelDebug, "hi", map[string]any{}}}},
		{"plain lines", []string{"hello\npanic: oops\n\n"},
			[]captured{{slog.LevelInfo, "hello", map[string]any{}}, {slog.LevelError, "panic: oops", map[string]any{}}}},
		{"partial line waits", []string{"no newline yet"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &captureHandler{}
			w := &slogWriter{logger: slog.New(h)}
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if !reflect.DeepEqual(h.records, tc.want) {
				t.Fatalf("records = %+v, want %+v", h.records, tc.want)
			}
		})
	}
}
