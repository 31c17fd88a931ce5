package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/jobspec"
)

// fakeAgent is an HTTP API whose answers the test sets per route.
type fakeAgent struct {
	t   *testing.T
	mux *http.ServeMux
	srv *httptest.Server

	mu       sync.Mutex // guards the field below
	requests []string
}

func newFakeAgent(t *testing.T) *fakeAgent {
	f := &fakeAgent{t: t, mux: http.NewServeMux()}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		f.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// json answers pattern with v encoded as JSON.
func (f *fakeAgent) json(pattern string, v any) {
	f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Nomad-Index", "10")
		_ = json.NewEncoder(w).Encode(v)
	})
}

// fail answers pattern with an error status and message.
func (f *fakeAgent) fail(pattern string, status int, msg string) {
	f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, msg, status)
	})
}

func (f *fakeAgent) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// result is what one CLI run produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the CLI against addr with a fixed clock and the given job
// parser (nil: one that fails the test if called).
func runCLI(t *testing.T, addr string, parse parseJobFunc, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if parse == nil {
		parse = func(string, []byte, jobspec.Options) (*api.Job, error) {
			t.Error("job parser called unexpectedly")
			return nil, errors.New("unexpected")
		}
	}
	d := deps{
		runAgent: func([]string, io.Writer, io.Writer) int { t.Error("agent run unexpectedly"); return 1 },
		parseJob: parse,
		now:      func() time.Time { return fixedNow },
		getenv: func(k string) string {
			if k == "DROVER_ADDR" {
				return addr
			}
			return ""
		},
		readFile: os.ReadFile,
	}
	code := run(args, newMeta(&stdout, &stderr, d))
	return result{code, stdout.String(), stderr.String()}
}

func TestHelpForEveryCommand(t *testing.T) {
	for name, c := range commands() {
		if name == "agent" {
			continue // the agent package owns its help
		}
		t.Run(name, func(t *testing.T) {
			args := append(strings.Fields(name), "-h")
			r := runCLI(t, "http://127.0.0.1:1", nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "Usage: drover "+name) {
				t.Errorf("no usage line:\n%s", r.stdout)
			}
			if c.run == nil && !strings.Contains(r.stdout, "Subcommands:") {
				t.Errorf("no subcommands listed:\n%s", r.stdout)
			}
			if c.run != nil && name != "version" && name != "job init" && name != "operator snapshot inspect" && name != "operator gossip keyring generate" &&
				!strings.HasPrefix(name, "tls ") && !strings.Contains(r.stdout, "-address") {
				t.Errorf("no options listed:\n%s", r.stdout)
			}
		})
	}
}

func TestTopLevelUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string // where the usage goes: "stdout" or "stderr"
	}{
		{nil, 1, "stderr"},
		{[]string{"-h"}, 0, "stdout"},
		{[]string{"help"}, 0, "stdout"},
		{[]string{"nope"}, 1, "stderr"},
		{[]string{"job"}, 1, "stderr"},
		{[]string{"job", "nope"}, 1, "stderr"},
	}
	for _, tc := range cases {
		r := runCLI(t, "", nil, tc.args...)
		got := r.stdout
		if tc.out == "stderr" {
			got = r.stderr
		}
		if r.code != tc.code || !strings.Contains(got, "Usage: drover") {
			t.Errorf("%v: exit %d, %s = %q", tc.args, r.code, tc.out, got)
		}
	}
	if r := runCLI(t, "", nil, "help", "job", "run"); r.code != 0 || !strings.Contains(r.stdout, "-detach") {
		t.Errorf("help job run: %+v", r)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}} {
		if r := runCLI(t, "", nil, args...); r.code != 0 || r.stdout != "Drover v"+Version+"\n" {
			t.Errorf("%v: %+v", args, r)
		}
	}
}

func TestAgentDispatch(t *testing.T) {
	var got []string
	var stdout, stderr bytes.Buffer
	d := defaultDeps()
	d.runAgent = func(args []string, _, _ io.Writer) int { got = args; return 7 }
	if code := run([]string{"agent", "-dev", "-http-port", "5000"}, newMeta(&stdout, &stderr, d)); code != 7 {
		t.Errorf("exit %d, want the agent's 7", code)
	}
	if strings.Join(got, " ") != "-dev -http-port 5000" {
		t.Errorf("agent got %q", got)
	}
}

func TestBadFlag(t *testing.T) {
	r := runCLI(t, "", nil, "job", "status", "-nope")
	if r.code != 1 || !strings.Contains(r.stderr, "flag provided but not defined: -nope") || !strings.Contains(r.stderr, "Usage: drover job status") {
		t.Errorf("%+v", r)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	r := runCLI(t, addr, nil, "job", "status")
	want := "Error querying jobs: cannot reach the drover agent at " + addr + ": is `drover agent -dev` running? Set -address or DROVER_ADDR."
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to contain:\n%s", r.code, r.stderr, want)
	}
}

func TestAddressFlagWinsOverEnv(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/jobs", []*api.JobListStub{})
	for _, args := range [][]string{
		{"job", "status", "-address", f.srv.URL},
		{"-address=" + f.srv.URL, "job", "status"},
	} {
		r := runCLI(t, "http://127.0.0.1:1", nil, args...)
		if r.code != 0 || r.stdout != "No running jobs\n" {
			t.Errorf("%v: %+v", args, r)
		}
	}
}

func TestServerErrorShowsItsMessage(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/jobs", []*api.JobListStub{{ID: "web"}})
	f.fail("GET /v1/job/web", 500, "state store is closed")
	r := runCLI(t, f.srv.URL, nil, "job", "status", "web")
	if r.code != 1 || strings.TrimSpace(r.stderr) != `Error querying job "web": state store is closed` {
		t.Errorf("%+v", r)
	}
}

func TestJobStatusUnknownAndAmbiguous(t *testing.T) {
	f := newFakeAgent(t)
	f.mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		var out []*api.JobListStub
		for _, id := range []string{"web-a", "web-b"} {
			if strings.HasPrefix(id, r.URL.Query().Get("prefix")) {
				out = append(out, &api.JobListStub{ID: id, Type: "service", Priority: 50, Status: "running"})
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	if r := runCLI(t, f.srv.URL, nil, "job", "status", "db"); r.code != 1 || !strings.Contains(r.stderr, `No job(s) with prefix or ID "db" found`) {
		t.Errorf("unknown: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "status", "web"); r.code != 1 || !strings.Contains(r.stdout, "Prefix matched multiple jobs") || !strings.Contains(r.stdout, "web-b") {
		t.Errorf("ambiguous: %+v", r)
	}
}

func TestJobInit(t *testing.T) {
	t.Chdir(t.TempDir())
	r := runCLI(t, "", nil, "job", "init")
	if r.code != 0 || !strings.Contains(r.stdout, defaultInitFile) {
		t.Fatalf("%+v", r)
	}
	got, err := os.ReadFile(defaultInitFile)
	if err != nil || string(got) != exampleJob {
		t.Fatalf("file content wrong: %v", err)
	}
	if err := os.WriteFile(defaultInitFile, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", nil, "job", "init")
	if r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("overwrite: %+v", r)
	}
	if got, _ := os.ReadFile(defaultInitFile); string(got) != "mine" {
		t.Error("existing file was overwritten")
	}
	if r := runCLI(t, "", nil, "job", "init", filepath.Join("sub", "x.hcl")); r.code != 1 {
		t.Errorf("missing directory: %+v", r)
	}
	if r := runCLI(t, "", nil, "job", "init", "other.hcl"); r.code != 0 {
		t.Errorf("named file: %+v", r)
	}
}

// runJobFixture sets up an agent that accepts job "hello" and answers the
// evaluation and allocation queries with the given values.
func runJobFixture(t *testing.T, eval *api.Evaluation, evalAllocs, jobAllocs []*api.AllocationListStub) *fakeAgent {
	f := newFakeAgent(t)
	f.mux.HandleFunc("PUT /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		var req api.JobRegisterRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Job == nil || *req.Job.ID != "hello" {
			http.Error(w, "bad job", 400)
			return
		}
		_ = json.NewEncoder(w).Encode(api.JobRegisterResponse{EvalID: eval.ID, JobModifyIndex: 5})
	})
	f.json("GET /v1/evaluation/"+eval.ID, eval)
	f.json("GET /v1/evaluation/"+eval.ID+"/allocations", evalAllocs)
	f.json("GET /v1/job/hello/allocations", jobAllocs)
	return f
}

func helloParser(t *testing.T) parseJobFunc {
	return func(name string, src []byte, _ jobspec.Options) (*api.Job, error) {
		if !strings.HasSuffix(name, "hello.hcl") || string(src) != "job file" {
			t.Errorf("parser got %q %q", name, src)
		}
		return &api.Job{ID: api.String("hello"), Type: api.String("service")}, nil
	}
}

func writeJobFile(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "hello.hcl")
	if err := os.WriteFile(path, []byte("job file"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	evalID  = "ab12cd34-0000-0000-0000-000000000000"
	allocID = "1234abcd-1111-2222-3333-444455556666"
	nodeID  = "5678efgh-1111-2222-3333-444455556666"
)

func TestJobRunMonitorsUntilRunning(t *testing.T) {
	pending := &api.AllocationListStub{ID: allocID, NodeID: nodeID, TaskGroup: "web", JobID: "hello", ClientStatus: "pending"}
	running := *pending
	running.ClientStatus, running.ClientDescription = "running", "Tasks are running"
	f := runJobFixture(t,
		&api.Evaluation{ID: evalID, JobID: "hello", Type: "service", Status: "complete"},
		[]*api.AllocationListStub{pending}, []*api.AllocationListStub{&running})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	golden(t, "job_run", r.stdout)
}

func TestJobRunPlacementFailureExits2(t *testing.T) {
	f := runJobFixture(t,
		&api.Evaluation{ID: evalID, JobID: "hello", Type: "service", Status: "complete",
			BlockedEval:    "bbbbbbbb-0000-0000-0000-000000000000",
			FailedTGAllocs: map[string]*api.AllocationMetric{"web": fixtureMetric()}},
		[]*api.AllocationListStub{}, []*api.AllocationListStub{})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 2 {
		t.Fatalf("exit %d, want 2: %s", r.code, r.stderr)
	}
	golden(t, "job_run_placement_failure", r.stdout)
}

func TestJobRunFailedAllocExits1(t *testing.T) {
	failed := &api.AllocationListStub{ID: allocID, NodeID: nodeID, TaskGroup: "web", JobID: "hello", ClientStatus: "failed",
		ClientDescription: "Failed tasks",
		TaskStates: map[string]*api.TaskState{"greeter": {State: "dead", Failed: true, Events: []*api.TaskEvent{
			{Type: "Received", DisplayMessage: "Task received by client"},
			{Type: "Driver Failure", FailsTask: true, DisplayMessage: `failed to start: exec: "nope": not found`},
			{Type: "Not Restarting", FailsTask: true, DisplayMessage: "Error was unrecoverable"},
		}}}}
	f := runJobFixture(t,
		&api.Evaluation{ID: evalID, JobID: "hello", Type: "service", Status: "complete"},
		[]*api.AllocationListStub{failed}, []*api.AllocationListStub{failed})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	if !strings.Contains(r.stdout, `Task "greeter" failed: Driver Failure: failed to start: exec: "nope": not found`) {
		t.Errorf("failure not explained:\n%s", r.stdout)
	}
}

func TestJobRunDetach(t *testing.T) {
	f := runJobFixture(t, &api.Evaluation{ID: evalID}, nil, nil)
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", "-detach", writeJobFile(t))
	if r.code != 0 || r.stdout != "Job registration successful\nEvaluation ID: "+evalID+"\n" {
		t.Errorf("%+v", r)
	}
	for _, req := range f.sent() {
		if strings.Contains(req, "evaluation") {
			t.Errorf("-detach followed the evaluation: %s", req)
		}
	}
}

func TestJobRunParseErrorSendsNothing(t *testing.T) {
	f := newFakeAgent(t)
	parse := func(name string, _ []byte, _ jobspec.Options) (*api.Job, error) {
		return nil, errors.New(name + `:3:5: Unsupported argument; An argument named "cuont" is not expected here.`)
	}
	path := writeJobFile(t)
	r := runCLI(t, f.srv.URL, parse, "job", "run", path)
	if r.code != 1 || !strings.Contains(r.stderr, path+":3:5: Unsupported argument") {
		t.Errorf("%+v", r)
	}
	if s := f.sent(); len(s) != 0 {
		t.Errorf("requests sent: %v", s)
	}
	r = runCLI(t, f.srv.URL, parse, "job", "run", filepath.Join(t.TempDir(), "missing.hcl"))
	if r.code != 1 || !strings.Contains(r.stderr, "Error reading job file") {
		t.Errorf("missing file: %+v", r)
	}
}

func TestJobRunRejectedBySever(t *testing.T) {
	f := newFakeAgent(t)
	f.fail("PUT /v1/jobs", 400, `1 error occurred: group "web" has no tasks`)
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 1 || strings.TrimSpace(r.stderr) != `Error submitting job: 1 error occurred: group "web" has no tasks` {
		t.Errorf("%+v", r)
	}
}

func TestJobStop(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/jobs", []*api.JobListStub{{ID: "hello"}})
	f.mux.HandleFunc("DELETE /v1/job/hello", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("purge") != "true" {
			t.Errorf("purge not sent: %s", r.URL.RawQuery)
		}
		_ = json.NewEncoder(w).Encode(api.JobDeregisterResponse{EvalID: evalID})
	})
	f.json("GET /v1/evaluation/"+evalID, &api.Evaluation{ID: evalID, JobID: "hello", Status: "complete"})
	f.json("GET /v1/evaluation/"+evalID+"/allocations", []*api.AllocationListStub{})
	r := runCLI(t, f.srv.URL, nil, "job", "stop", "-purge", "hello")
	if r.code != 0 || !strings.Contains(r.stdout, `Evaluation "ab12cd34" finished with status "complete"`) {
		t.Errorf("%+v", r)
	}
	r = runCLI(t, f.srv.URL, nil, "job", "stop", "-purge", "-detach", "hello")
	if r.code != 0 || r.stdout != evalID+"\n" {
		t.Errorf("detach: %+v", r)
	}
}

func TestJobInspect(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/jobs", []*api.JobListStub{{ID: "hello"}})
	f.json("GET /v1/job/hello", &api.Job{ID: api.String("hello"), Priority: api.Int(50)})
	r := runCLI(t, f.srv.URL, nil, "job", "inspect", "hello")
	var got struct{ Job *api.Job }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("%+v: %v", r, err)
	}
	if *got.Job.ID != "hello" || *got.Job.Priority != 50 {
		t.Errorf("got %+v", got.Job)
	}
}

func TestAllocStatusByPrefix(t *testing.T) {
	f := newFakeAgent(t)
	stubs := fixtureJobStatus().Allocs
	f.mux.HandleFunc("GET /v1/allocations", func(w http.ResponseWriter, r *http.Request) {
		var out []*api.AllocationListStub
		for _, a := range stubs {
			if strings.HasPrefix(a.ID, r.URL.Query().Get("prefix")) {
				out = append(out, a)
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	f.json("GET /v1/allocation/"+allocID, fixtureAlloc())

	r := runCLI(t, f.srv.URL, nil, "alloc", "status", "1234")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	golden(t, "alloc_status", r.stdout) // the same rendering as formatAllocStatus

	r = runCLI(t, f.srv.URL, nil, "alloc", "status", "")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "Prefix matched multiple allocations\n\n") {
		t.Errorf("ambiguous: %+v", r)
	}
	r = runCLI(t, f.srv.URL, nil, "alloc", "status", "ffff")
	if r.code != 1 || !strings.Contains(r.stderr, `No allocation(s) with prefix or ID "ffff" found`) {
		t.Errorf("unknown: %+v", r)
	}
}

func TestStatusDispatchesByPrefix(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/jobs", []*api.JobListStub{})
	f.json("GET /v1/allocations", []*api.AllocationListStub{{ID: allocID}})
	f.json("GET /v1/nodes", []*api.NodeListStub{})
	f.json("GET /v1/allocation/"+allocID, fixtureAlloc())
	r := runCLI(t, f.srv.URL, nil, "status", "1234")
	if r.code != 0 || r.stdout != formatAllocStatus(fixtureAlloc(), nil, fixedNow, false) {
		t.Errorf("%+v", r)
	}
}

func TestNodeStatus(t *testing.T) {
	f := newFakeAgent(t)
	node, allocs := fixtureNode()
	f.json("GET /v1/nodes", []*api.NodeListStub{{ID: node.ID, Name: "dev", Datacenter: "dc1", NodePool: "default", SchedulingEligibility: "eligible", Status: "ready"}})
	f.json("GET /v1/node/"+node.ID, node)
	f.json("GET /v1/node/"+node.ID+"/allocations", allocs)
	r := runCLI(t, f.srv.URL, nil, "node", "status", "5678")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	golden(t, "node_status", r.stdout)
}

func TestAgentHelpIsTheAgents(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run([]string{"agent", "-h"}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "Usage: drover agent") || !strings.Contains(stdout.String(), "-dev") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}
