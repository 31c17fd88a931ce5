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
		Output:      levelLogWriter{logger: logger, component: "raft"},
		DisableTime: true,
	})
}

// levelLogWriter turns the text lines of hclog and of the standard logger
// that serf and memberlist write ("[WARN]  raft: message: k=v") into slog
// records at the matching level, with the component as an attribute.
type levelLogWriter struct {
	logger    *slog.Logger
	component string
}

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
func (w levelLogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	level := slog.LevelInfo
	for _, l := range raftLogLevels {
		if rest, ok := strings.CutPrefix(line, l.prefix); ok {
			level, line = l.level, strings.TrimSpace(rest)
			break
		}
	}
	for _, prefix := range []string{"raft: ", "serf: ", "memberlist: "} {
		line = strings.TrimPrefix(line, prefix)
	}
	w.logger.Log(context.Background(), level, line, "component", w.component)
	return len(p), nil
}
