package server

import (
	"context"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// newRaftLogger returns the hclog.Logger raft wants, writing into logger
// at the level raft gave each line (hclog's standard-logger bridge would
// log every line at one level, so a raft warning read as INFO).
func newRaftLogger(logger *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        "raft",
		Level:       hclog.Warn,
		Output:      raftLogWriter{logger: logger},
		DisableTime: true,
	})
}

// raftLogWriter turns hclog's text lines ("[WARN]  raft: message: k=v")
// into slog records at the matching level.
type raftLogWriter struct{ logger *slog.Logger }

var raftLogLevels = []struct {
	prefix string
	level  slog.Level
}{
	{"[ERROR]", slog.LevelError},
	{"[WARN]", slog.LevelWarn},
	{"[INFO]", slog.LevelInfo},
	{"[DEBUG]", slog.LevelDebug},
	{"[TRACE]", slog.LevelDebug},
}

// Write logs one line; hclog writes whole lines.
func (w raftLogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	level := slog.LevelInfo
	for _, l := range raftLogLevels {
		if rest, ok := strings.CutPrefix(line, l.prefix); ok {
			level, line = l.level, strings.TrimSpace(rest)
			break
		}
	}
	line = strings.TrimPrefix(line, "raft: ")
	w.logger.Log(context.Background(), level, line, "component", "raft")
	return len(p), nil
}
