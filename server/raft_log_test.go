package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestRaftLoggerKeepsLevels(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rl := newRaftLogger(logger)
	rl.Warn("heartbeat timeout reached", "last-leader-addr", "")
	rl.Error("failed to contact", "id", "n2")
	rl.Info("below the raft logger's level: dropped")
	out := buf.String()
	for _, want := range []string{
		`level=WARN msg="heartbeat timeout reached: last-leader-addr=\"\"" component=raft`,
		`level=ERROR msg="failed to contact: id=n2" component=raft`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "dropped") {
		t.Errorf("an INFO line passed the raft logger's WARN level:\n%s", out)
	}
}
