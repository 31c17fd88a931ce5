package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// slogWriter turns lines of log output into records of logger: JSON lines
// from slog ("level", "msg") or hclog ("@level", "@message") keep their
// level, message and attributes; other lines are logged whole at info (an
// "error"/"panic" prefix: at error).
type slogWriter struct {
	logger *slog.Logger

	mu  sync.Mutex // guards the field below
	buf []byte
}

// Write logs each complete line of p; a partial line waits for its end.
func (w *slogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf = append(w.buf, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, append([]byte(nil), w.buf[:i]...))
		w.buf = w.buf[i+1:]
	}
	w.mu.Unlock()
	for _, line := range lines {
		w.logLine(line)
	}
	return len(p), nil
}

func (w *slogWriter) logLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var fields map[string]any
	if json.Unmarshal(line, &fields) != nil {
		level := slog.LevelInfo
		lower := strings.ToLower(string(line))
		if strings.HasPrefix(lower, "panic") || strings.HasPrefix(lower, "fatal") || strings.HasPrefix(lower, "[error]") {
			level = slog.LevelError
		}
		w.logger.Log(context.Background(), level, string(line))
		return
	}
	msg := takeString(fields, "msg", "@message")
	level := parseLevel(takeString(fields, "level", "@level"))
	delete(fields, "time")
	delete(fields, "@timestamp")
	attrs := make([]any, 0, 2*len(fields))
	for _, k := range sortedKeys(fields) {
		attrs = append(attrs, k, fields[k])
	}
	w.logger.Log(context.Background(), level, msg, attrs...)
}

func takeString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k].(string); ok {
			delete(m, k)
			return v
		}
	}
	return ""
}

func parseLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
