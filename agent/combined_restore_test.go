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
	"time"

	"github.com/drover-io/drover/structs"
)

// logRecorder is a slog handler keeping the messages logged, in order.
type logRecorder struct {
	mu     *sync.Mutex
	msgs   *[]string
	logged chan struct{} // signalled, without blocking, after each message
}

func newLogRecorder() logRecorder {
	return logRecorder{mu: &sync.Mutex{}, msgs: &[]string{}, logged: make(chan struct{}, 1)}
}

// await waits until msg is logged, waking on each message.
func (r logRecorder) await(t *testing.T, msg string) {
	t.Helper()
	timeout := time.After(eventBound)
	for !slices.Contains(r.messages(), msg) {
		select {
		case <-r.logged:
		case <-timeout:
			t.Fatalf("%q not logged after %s: %q", msg, eventBound, r.messages())
		}
	}
}

func (logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.msgs = append(*r.msgs, rec.Message)
	select {
	case r.logged <- struct{}{}:
	default:
	}
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
	ta.watch("the task to run", "/v1/job/early/allocations", &allocs, func() bool {
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	ta.stop()

	rec := newLogRecorder()
	a, err := NewAgent(cfg(), slog.New(rec))
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	rec.await(t, "re-attached to task") // before Start
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
	var alloc structs.Allocation
	ta2.watch("the task to stop", "/v1/allocation/"+allocs[0].ID, &alloc, func() bool {
		ts := alloc.TaskStates["t"]
		return alloc.ClientStatus == structs.AllocClientStatusComplete && ts != nil &&
			ts.Restarts == 0 && slices.ContainsFunc(ts.Events, func(e *structs.TaskEvent) bool { return e.Type == structs.TaskKilled })
	})
}
