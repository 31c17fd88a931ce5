package command

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

func TestMonitorPrintsFrames(t *testing.T) {
	f := newFakeAgent(t)
	var query string
	f.mux.HandleFunc("GET /v1/agent/monitor", func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		enc := json.NewEncoder(w)
		_ = enc.Encode(api.StreamFrame{Data: []byte("2026-01-01T00:00:00.000Z [DEBUG] http: one\n")})
		_ = enc.Encode(api.StreamFrame{}) // a heartbeat
		_ = enc.Encode(api.StreamFrame{Data: []byte("2026-01-01T00:00:01.000Z [INFO] two\n")})
	})
	r := runCLI(t, f.srv.URL, nil, "monitor", "-log-level", "debug", "-node-id", "abcd")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	want := "2026-01-01T00:00:00.000Z [DEBUG] http: one\n2026-01-01T00:00:01.000Z [INFO] two\n"
	if r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if !strings.Contains(query, "log_level=debug") || !strings.Contains(query, "node_id=abcd") || !strings.Contains(query, "log_json=false") {
		t.Errorf("query %q", query)
	}

	if r := runCLI(t, f.srv.URL, nil, "monitor", "-log-level", "loud"); r.code != 1 || !strings.Contains(r.stderr, "use trace, debug") {
		t.Errorf("bad level: %+v", r)
	}
}

func TestAgentInfo(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/agent/self", api.AgentSelf{Stats: map[string]map[string]string{
		"runtime": {"goroutines": "12", "arch": "amd64"},
		"client":  {"node_id": "n1"},
	}})
	r := runCLI(t, f.srv.URL, nil, "agent-info")
	want := "client\n  node_id = n1\nruntime\n  arch = amd64\n  goroutines = 12\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %q, want %q (stderr %s)", r.code, r.stdout, want, r.stderr)
	}
	r = runCLI(t, f.srv.URL, nil, "agent-info", "-json")
	var self api.AgentSelf
	if err := json.Unmarshal([]byte(r.stdout), &self); err != nil || self.Stats["client"]["node_id"] != "n1" {
		t.Fatalf("-json: %v, %q", err, r.stdout)
	}
}

func TestServerMembers(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/agent/members", api.ServerMembers{ServerName: "a.global", Members: []*api.AgentMember{
		{Name: "a.global", Addr: "10.0.0.1", Port: 4648, Status: "alive", Tags: map[string]string{"build": "0.1.0", "dc": "dc1", "region": "global",
			"rpc_addr": "10.0.0.1:4647", "raft_vsn": "3"}},
	}})
	f.json("GET /v1/status/leader", "10.0.0.1:4647")
	r := runCLI(t, f.srv.URL, nil, "server", "members")
	want := "Name      Address   Port  Status  Leader  Raft Version  Build  Datacenter  Region\n" +
		"a.global  10.0.0.1  4648  alive   true    3             0.1.0  dc1         global\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s(stderr %s)", r.code, r.stdout, want, r.stderr)
	}

	// A -dev server has no gossip: it lists itself without an RPC
	// address, and leads.
	dev := newFakeAgent(t)
	dev.json("GET /v1/agent/members", api.ServerMembers{ServerName: "a.global", Members: []*api.AgentMember{
		{Name: "a.global", Addr: "127.0.0.1", Port: 0, Status: "alive", Tags: map[string]string{"raft_vsn": "3"}},
	}})
	dev.json("GET /v1/status/leader", "127.0.0.1:4647")
	if r := runCLI(t, dev.srv.URL, nil, "server", "members"); r.code != 0 || !strings.Contains(r.stdout, "alive   true") {
		t.Fatalf("a -dev server: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// debugAgent fakes the endpoints operator debug reads; with debug, it
// serves profiles.
func debugAgent(t *testing.T, debug bool) *fakeAgent {
	f := newFakeAgent(t)
	f.json("GET /v1/agent/self", api.AgentSelf{Config: map[string]any{"Region": "global"}})
	f.json("GET /v1/agent/members", api.ServerMembers{ServerName: "a.global"})
	f.json("GET /v1/nodes", []*api.NodeListStub{{ID: "n1"}})
	f.json("GET /v1/jobs", []*api.JobListStub{{ID: "web"}})
	f.json("GET /v1/allocations", []*api.AllocationListStub{{ID: "a1"}})
	f.fail("GET /v1/evaluations", http.StatusInternalServerError, "evaluations are broken")
	f.mux.HandleFunc("GET /v1/agent/pprof/{profile}", func(w http.ResponseWriter, r *http.Request) {
		if !debug {
			http.Error(w, "set enable_debug = true", http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, r.PathValue("profile")+" debug="+r.URL.Query().Get("debug"))
	})
	f.mux.HandleFunc("GET /v1/agent/monitor", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(api.StreamFrame{Data: []byte("a log line\n")})
	})
	return f
}

func TestOperatorDebugDirectory(t *testing.T) {
	f := debugAgent(t, true)
	out := t.TempDir()
	r := runCLI(t, f.srv.URL, nil, "operator", "debug", "-duration", "0s", "-output", out)
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{"Starting debugger", "Captured profiles: goroutine, heap", "Capturing interval 0000",
		"! interval/0000/evaluations.json: evaluations are broken", "Created debug directory: " + out} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in the progress:\n%s", want, r.stdout)
		}
	}
	dirs, err := os.ReadDir(out)
	if err != nil || len(dirs) != 1 || !strings.HasPrefix(dirs[0].Name(), "drover-debug-") {
		t.Fatalf("output holds %v, %v", dirs, err)
	}
	bundle := filepath.Join(out, dirs[0].Name())
	files := map[string]string{
		"agent-self.json":                "\"Region\": \"global\"",
		"members.json":                   "a.global",
		"goroutine.prof":                 "goroutine debug=",
		"goroutine-debug2.txt":           "goroutine debug=2",
		"heap.prof":                      "heap debug=",
		"interval/0000/nodes.json":       "n1",
		"interval/0000/jobs.json":        "web",
		"interval/0000/allocations.json": "a1",
		"errors.txt":                     "evaluations are broken",
		"monitor.log":                    "",
	}
	for name, want := range files {
		b, err := os.ReadFile(filepath.Join(bundle, name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, %q", name, err, b)
		}
	}
}

func TestOperatorDebugArchive(t *testing.T) {
	f := debugAgent(t, false)
	t.Chdir(t.TempDir())
	r := runCLI(t, f.srv.URL, nil, "operator", "debug", "-duration", "0s")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.stdout, "Profiles skipped: the agent serves them only with enable_debug = true") {
		t.Errorf("no word on the profiles:\n%s", r.stdout)
	}
	matches, _ := filepath.Glob("drover-debug-*.tar.gz")
	if len(matches) != 1 || !strings.Contains(r.stdout, "Created debug archive: "+matches[0]) {
		t.Fatalf("archives %v; progress:\n%s", matches, r.stdout)
	}
	names := tarNames(t, matches[0])
	base := strings.TrimSuffix(matches[0], ".tar.gz")
	for _, want := range []string{"agent-self.json", "members.json", "interval/0000/nodes.json", "monitor.log", "errors.txt"} {
		if !slices.Contains(names, base+"/"+want) {
			t.Errorf("no %s in the archive: %v", want, names)
		}
	}
	if slices.Contains(names, base+"/goroutine.prof") {
		t.Errorf("profiles in the archive of an agent without enable_debug: %v", names)
	}
}

func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

func TestOperatorDebugBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-interval", "0s"}, {"-duration", "-1s"}, {"-log-level", "loud"}, {"extra"}} {
		r := runCLI(t, "http://127.0.0.1:1", nil, append([]string{"operator", "debug"}, args...)...)
		if r.code != 1 {
			t.Errorf("%v: %+v", args, r)
		}
	}
}
