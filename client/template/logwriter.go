package template

import (
	"context"
	"io"
	"log/slog"
	"strings"
)

// LogWriter returns a writer for the standard library's log package that
// gives consul-template's lines ("[DEBUG] (runner) ...") to logger: its
// TRACE, DEBUG and INFO lines at debug level (they are many), WARN at
// warn, ERR at error. The agent's command points the log package at it:
// consul-template logs only there.
func LogWriter(logger *slog.Logger) io.Writer { return logWriter{logger} }

type logWriter struct{ logger *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		level := slog.LevelDebug
		msg := line
		if i := strings.Index(line, "["); i >= 0 {
			if j := strings.Index(line[i:], "]"); j > 0 {
				switch line[i+1 : i+j] {
				case "WARN":
					level = slog.LevelWarn
				case "ERR", "ERROR":
					level = slog.LevelError
				}
				msg = strings.TrimSpace(line[i+j+1:])
			}
		}
		w.logger.Log(context.Background(), level, msg)
	}
	return len(p), nil
}
