package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/jobspec"
)

// runWith is runCLI with deps changed by mutate.
func runWith(t *testing.T, addr string, mutate func(*deps), args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	d := deps{
		runAgent: func([]string, io.Writer, io.Writer) int { t.Error("agent run unexpectedly"); return 1 },
		parseJob: func(string, []byte, jobspec.Options) (*api.Job, error) { return nil, errors.New("unexpected") },
		now:      func() time.Time { return fixedNow },
		getenv: func(k string) string {
			if k == "DROVER_ADDR" {
				return addr
			}
			return ""
		},
		readFile: os.ReadFile,
	}
	if mutate != nil {
		mutate(&d)
	}
	code := run(args, newMeta(&stdout, &stderr, d))
	return result{code, stdout.String(), stderr.String()}
}

// jobFixture answers the job list and the job "web" with groups.
func jobFixture(t *testing.T, groups ...string) *fakeAgent {
	f := newFakeAgent(t)
	f.json("GET /v1/jobs", []*api.JobListStub{{ID: "web", Type: "service"}})
	job := &api.Job{ID: api.String("web"), Type: api.String("service")}
	for _, g := range groups {
		job.TaskGroups = append(job.TaskGroups, &api.TaskGroup{Name: api.String(g),
			Tasks: []*api.Task{{Name: g + "-task", Driver: "mock"}, {Name: "sidecar", Driver: "mock"}}})
	}
	f.json("GET /v1/job/web", job)
	return f
}

func TestJobScale(t *testing.T) {
	tests := []struct {
		name      string
		groups    []string
		args      []string
		wantCode  int
		wantGroup string
		wantCount int64
		wantOut   string
	}{
		{name: "group named", groups: []string{"a", "b"}, args: []string{"web", "b", "3"}, wantGroup: "b", wantCount: 3,
			wantOut: "Job \"web\" group \"b\" scaled to 3\nEvaluation ID: " + evalID},
		{name: "only group", groups: []string{"a"}, args: []string{"web", "0"}, wantGroup: "a", wantCount: 0},
		{name: "group needed", groups: []string{"a", "b"}, args: []string{"web", "2"}, wantCode: 1},
		{name: "bad count", groups: []string{"a"}, args: []string{"web", "-2"}, wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := jobFixture(t, tt.groups...)
			var got api.ScalingRequest
			f.mux.HandleFunc("POST /v1/job/web/scale", func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewDecoder(r.Body).Decode(&got)
				_ = json.NewEncoder(w).Encode(api.JobRegisterResponse{EvalID: evalID})
			})
			r := runCLI(t, f.srv.URL, nil, append([]string{"job", "scale", "-detach"}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d: %+v", r.code, tt.wantCode, r)
			}
			if tt.wantCode != 0 {
				return
			}
			if got.Target["Group"] != tt.wantGroup || got.Count == nil || *got.Count != tt.wantCount {
				t.Errorf("request = %+v, want group %s count %d", got, tt.wantGroup, tt.wantCount)
			}
			if !strings.Contains(r.stdout, tt.wantOut) {
				t.Errorf("stdout = %q, want %q", r.stdout, tt.wantOut)
			}
		})
	}
}

func TestJobScaleRefusedShowsTheAgentsMessage(t *testing.T) {
	f := jobFixture(t, "a")
	f.fail("POST /v1/job/web/scale", 400, `group "a": count 9 is outside the scaling block's bounds [1, 5]`)
	r := runCLI(t, f.srv.URL, nil, "job", "scale", "web", "a", "9")
	if r.code != 1 || !strings.Contains(r.stderr, `count 9 is outside the scaling block's bounds [1, 5]`) {
		t.Errorf("%+v", r)
	}
}

func TestJobScalingEvents(t *testing.T) {
	f := jobFixture(t, "a")
	three, eval := int64(3), evalID
	f.json("GET /v1/job/web/scale", api.JobScaleStatusResponse{JobID: "web", TaskGroups: map[string]api.TaskGroupScaleStatus{
		"a": {Desired: 3, Events: []api.ScalingEvent{
			{Count: &three, PreviousCount: 1, Message: "up", EvalID: &eval, Time: uint64(fixedNow.UnixNano())},
			{PreviousCount: 1, Error: true, Message: "no metrics", Time: uint64(fixedNow.Add(-time.Minute).UnixNano())},
		}},
	}})
	r := runCLI(t, f.srv.URL, nil, "job", "scaling-events", "-verbose", "web")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "Task Group  Count  PrevCount  Date") ||
		!strings.Contains(lines[1], "a           3      1") || !strings.Contains(lines[1], evalID) ||
		!strings.Contains(lines[2], "-      1") || !strings.Contains(lines[2], "true   no metrics") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestJobAllocs(t *testing.T) {
	f := jobFixture(t, "a")
	var all string
	f.mux.HandleFunc("GET /v1/job/web/allocations", func(w http.ResponseWriter, r *http.Request) {
		all = r.URL.Query().Get("all")
		_ = json.NewEncoder(w).Encode([]*api.AllocationListStub{{ID: allocID, NodeID: nodeID, TaskGroup: "a", DesiredStatus: "run", ClientStatus: "running"}})
	})
	r := runCLI(t, f.srv.URL, nil, "job", "allocs", "-all", "web")
	if r.code != 0 || !strings.Contains(r.stdout, "1234abcd  5678efgh  a") || all != "true" {
		t.Errorf("%+v (all=%q)", r, all)
	}
}

// restartFixture serves job "web" with groups a and b and the given
// allocations, and records the restart and stop requests in order.
type restartFixture struct {
	*fakeAgent
	mu    sync.Mutex // guards calls
	calls []string
}

func newRestartFixture(t *testing.T, allocs []*api.AllocationListStub, failID string) *restartFixture {
	f := &restartFixture{fakeAgent: jobFixture(t, "a", "b")}
	f.json("GET /v1/job/web/allocations", allocs)
	record := func(w http.ResponseWriter, r *http.Request, what string) {
		var body api.AllocationRestartRequest
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.calls = append(f.calls, what+" "+r.PathValue("id")+" "+body.TaskName)
		f.mu.Unlock()
		if r.PathValue("id") == failID {
			http.Error(w, "task not running", 400)
			return
		}
		_ = json.NewEncoder(w).Encode(api.AllocStopResponse{EvalID: evalID})
	}
	f.mux.HandleFunc("PUT /v1/client/allocation/{id}/restart", func(w http.ResponseWriter, r *http.Request) { record(w, r, "restart") })
	f.mux.HandleFunc("PUT /v1/allocation/{id}/stop", func(w http.ResponseWriter, r *http.Request) { record(w, r, "stop") })
	f.mux.HandleFunc("POST /v1/allocation/{id}/stop", func(w http.ResponseWriter, r *http.Request) { record(w, r, "stop") })
	return f
}

func (f *restartFixture) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func TestJobRestart(t *testing.T) {
	allocs := []*api.AllocationListStub{
		{ID: "a1", TaskGroup: "a", DesiredStatus: "run", ClientStatus: "running", CreateIndex: 1},
		{ID: "a2", TaskGroup: "a", DesiredStatus: "run", ClientStatus: "running", CreateIndex: 2},
		{ID: "b1", TaskGroup: "b", DesiredStatus: "run", ClientStatus: "running", CreateIndex: 3},
		{ID: "b2", TaskGroup: "b", DesiredStatus: "stop", ClientStatus: "complete", CreateIndex: 4},
		{ID: "b3", TaskGroup: "b", DesiredStatus: "run", ClientStatus: "pending", CreateIndex: 5},
	}
	tests := []struct {
		name       string
		args       []string
		stdin      string
		failID     string
		wantCode   int
		wantCalls  []string // sorted within a batch is not guaranteed: compared as a set
		wantSleeps []time.Duration
		wantOut    string
	}{
		{name: "one at a time", args: []string{"web"}, wantCalls: []string{"restart a1 ", "restart a2 ", "restart b1 "},
			wantOut: "Restarting 3 allocations in 3 batches of at most 1"},
		{name: "batches with a wait", args: []string{"-batch-size", "2", "-batch-wait", "10s", "web"},
			wantCalls: []string{"restart a1 ", "restart a2 ", "restart b1 "}, wantSleeps: []time.Duration{10 * time.Second},
			wantOut: "in 2 batches of at most 2"},
		{name: "percent", args: []string{"-batch-size", "50%", "web"}, wantCalls: []string{"restart a1 ", "restart a2 ", "restart b1 "},
			wantOut: "in 2 batches of at most 2"},
		{name: "group and task", args: []string{"-group", "a", "-task", "sidecar", "web"},
			wantCalls: []string{"restart a1 sidecar", "restart a2 sidecar"}},
		{name: "reschedule", args: []string{"-group", "b", "-reschedule", "web"}, wantCalls: []string{"stop b1 "}},
		{name: "ask, then no", args: []string{"-batch-wait", "ask", "web"}, stdin: "n\n", wantCode: 1, wantCalls: []string{"restart a1 "}},
		{name: "ask, then yes", args: []string{"-batch-size", "2", "-batch-wait", "ask", "web"}, stdin: "y\n",
			wantCalls: []string{"restart a1 ", "restart a2 ", "restart b1 "}},
		{name: "failed batch, on-error fail", args: []string{"-on-error", "fail", "web"}, failID: "a1", wantCode: 1,
			wantCalls: []string{"restart a1 "}},
		{name: "failed batch, yes goes on", args: []string{"-yes", "web"}, failID: "a2", wantCode: 1,
			wantCalls: []string{"restart a1 ", "restart a2 ", "restart b1 "}, wantOut: "1 of 3 allocations failed to restart"},
		{name: "unknown group", args: []string{"-group", "zz", "web"}, wantCode: 1},
		{name: "task with reschedule", args: []string{"-task", "x", "-reschedule", "web"}, wantCode: 1},
		{name: "bad batch size", args: []string{"-batch-size", "0", "web"}, wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newRestartFixture(t, allocs, tt.failID)
			var sleeps []time.Duration
			r := runWith(t, f.srv.URL, func(d *deps) {
				d.stdin = strings.NewReader(tt.stdin)
				d.sleep = func(_ context.Context, dur time.Duration) error { sleeps = append(sleeps, dur); return nil }
			}, append([]string{"job", "restart"}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			got := f.got()
			if strings.Join(sorted(got), ";") != strings.Join(sorted(tt.wantCalls), ";") {
				t.Errorf("calls = %q, want %q", got, tt.wantCalls)
			}
			if len(sleeps) != len(tt.wantSleeps) || (len(sleeps) > 0 && sleeps[0] != tt.wantSleeps[0]) {
				t.Errorf("sleeps = %v, want %v", sleeps, tt.wantSleeps)
			}
			if !strings.Contains(r.stdout, tt.wantOut) {
				t.Errorf("stdout = %q, want %q", r.stdout, tt.wantOut)
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestJobTag(t *testing.T) {
	f := jobFixture(t, "a")
	var (
		mu    sync.Mutex // guards calls
		calls []string
	)
	f.mux.HandleFunc("PUT /v1/job/web/versions/{name}/tag", func(w http.ResponseWriter, r *http.Request) {
		var body api.TagVersionRequest
		_ = json.NewDecoder(r.Body).Decode(&body)
		v := "current"
		if body.Version != nil {
			v = strconv.FormatUint(*body.Version, 10)
		}
		mu.Lock()
		calls = append(calls, "apply "+r.PathValue("name")+" "+v+" "+body.Description)
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]uint64{"Version": 4})
	})
	f.mux.HandleFunc("DELETE /v1/job/web/versions/{name}/tag", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, "unset "+r.PathValue("name"))
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]uint64{"Version": 4})
	})
	if r := runCLI(t, f.srv.URL, nil, "job", "tag", "apply", "-name", "golden", "-description", "good one", "web"); r.code != 0 ||
		r.stdout != "Job version 4 tagged with name \"golden\"\n" {
		t.Errorf("apply: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "tag", "apply", "-name", "old", "-version", "0", "web"); r.code != 0 {
		t.Errorf("apply -version: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "tag", "unset", "-name", "golden", "web"); r.code != 0 || !strings.Contains(r.stdout, `Tag "golden" removed`) {
		t.Errorf("unset: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "tag", "apply", "web"); r.code != 1 || !strings.Contains(r.stderr, "-name is required") {
		t.Errorf("no name: %+v", r)
	}
	want := []string{"apply golden current good one", "apply old 0 ", "unset golden"}
	if strings.Join(calls, ";") != strings.Join(want, ";") {
		t.Errorf("calls = %q, want %q", calls, want)
	}
}
