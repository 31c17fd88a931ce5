package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/drover-io/drover/structs"
)

// logRecorder is a slog handler keeping the messages logged, in order.
type logRecorder struct {
	mu   *sync.Mutex
	msgs *[]string
}

func newLogRecorder() logRecorder { return logRecorder{mu: &sync.Mutex{}, msgs: &[]string{}} }

func (logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.msgs = append(*r.msgs, rec.Message)
	return nil
}
func (r logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r logRecorder) WithGroup(string) slog.Handler      { return r }

func (r logRecorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(*r.msgs)
}

// TestCombinedAgentReattachesBeforeStart: a combined agent restarted on a
// data dir with a running task re-attaches to it while NewAgent creates
// the server, without waiting for Start (nor for registration); once
// started it controls the task.
func TestCombinedAgentReattachesBeforeStart(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	dir := t.TempDir()
	cfg := func() *Config {
		c := persistentConfig(dir, true, true)
		c.Plugins["raw_exec"] = &PluginConfig{Name: "raw_exec", Config: json.RawMessage(`{"enabled": true}`)}
		return c
	}
	ta := startAgent(t, cfg())
	body := fmt.Sprintf(`{"Job": {"ID": "early", "Type": "service",
		"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "raw_exec",
		"Config": {"command": %q, "args": ["300"]}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`, sleep)
	ta.must("PUT", "/v1/jobs", body, nil)
	var allocs []*structs.AllocListStub
	waitFor(t, "the task to run", func() bool {
		ta.must("GET", "/v1/job/early/allocations", "", &allocs)
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	ta.stop()

	rec := newLogRecorder()
	a, err := NewAgent(cfg(), slog.New(rec))
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	waitFor(t, "the re-attach, before Start", func() bool {
		return slices.Contains(rec.messages(), "re-attached to task")
	})
	if slices.Contains(rec.messages(), "agent started") {
		t.Fatal("the agent started")
	}
	msgs := rec.messages()
	t.Logf("re-attached at log line %d, leadership at %d", slices.Index(msgs, "re-attached to task"), slices.Index(msgs, "established leadership"))

	if err := a.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ta2 := &testAgent{t: t, agent: a, base: "http://" + a.HTTPAddr(), hc: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(func() { ta2.stop() })
	ta2.must("DELETE", "/v1/job/early", "", nil)
	waitFor(t, "the task to stop", func() bool {
		var alloc structs.Allocation
		ta2.must("GET", "/v1/allocation/"+allocs[0].ID, "", &alloc)
		ts := alloc.TaskStates["t"]
		return alloc.ClientStatus == structs.AllocClientStatusComplete && ts != nil &&
			ts.Restarts == 0 && slices.ContainsFunc(ts.Events, func(e *structs.TaskEvent) bool { return e.Type == structs.TaskKilled })
	})
}
