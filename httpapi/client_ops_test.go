package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

const (
	testNodeID  = "node-0001-aaaa"
	otherNodeID = "node-0002-bbbb"
)

// opsBackend is a fakeBackend that knows a few allocations and can stop them.
type opsBackend struct {
	*fakeBackend
	allocs []*structs.Allocation
	mu     sync.Mutex // guards the field below
	stops  []string
}

// handlers binds the server's methods to the fake.
func (b *opsBackend) handlers() *rpcapi.Handlers {
	h := b.fakeBackend.handlers()
	rpcapi.Handle(h, rpcapi.AllocGet, b.AllocGet)
	rpcapi.Handle(h, rpcapi.AllocStop, b.AllocStop)
	rpcapi.Handle(h, rpcapi.AllocNode, allocNode(b.AllocGet, b.fakeBackend.NodeGet))
	rpcapi.Handle(h, rpcapi.SystemGC, func(context.Context, *structs.SystemRequest) (*structs.GenericResponse, error) {
		return &structs.GenericResponse{WriteMeta: structs.WriteMeta{Index: 9}}, nil
	})
	return h
}

// allocNode serves AllocNode from a fake's AllocGet and NodeGet, as the
// server does from its state.
func allocNode(
	getAlloc func(context.Context, *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error),
	getNode func(context.Context, *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error),
) func(context.Context, *structs.AllocSpecificRequest) (*structs.AllocNodeResponse, error) {
	return func(ctx context.Context, r *structs.AllocSpecificRequest) (*structs.AllocNodeResponse, error) {
		got, err := getAlloc(ctx, r)
		if err != nil {
			return nil, err
		}
		if got.Alloc == nil {
			return nil, structs.NotFound("allocation", r.AllocID)
		}
		resp := &structs.AllocNodeResponse{Alloc: got.Alloc}
		if n, err := getNode(ctx, &structs.NodeSpecificRequest{NodeID: got.Alloc.NodeID}); err == nil {
			resp.Node = n.Node
		}
		return resp, nil
	}
}

func (b *opsBackend) AllocGet(_ context.Context, r *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error) {
	var matches []*structs.Allocation
	for _, a := range b.allocs {
		if a.ID == r.AllocID {
			return &structs.SingleAllocResponse{Alloc: a}, nil
		}
		if strings.HasPrefix(a.ID, r.AllocID) {
			matches = append(matches, a)
		}
	}
	if len(matches) == 1 {
		return &structs.SingleAllocResponse{Alloc: matches[0]}, nil
	}
	return &structs.SingleAllocResponse{}, nil
}

// AllocStop stops an allocation by ID or unique prefix, as the server does.
func (b *opsBackend) AllocStop(ctx context.Context, r *structs.AllocStopRequest) (*structs.AllocStopResponse, error) {
	got, _ := b.AllocGet(ctx, &structs.AllocSpecificRequest{AllocID: r.AllocID})
	if got.Alloc == nil {
		return nil, structs.NotFound("allocation", r.AllocID)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stops = append(b.stops, got.Alloc.ID)
	return &structs.AllocStopResponse{EvalID: "eval-stop", WriteMeta: structs.WriteMeta{Index: 42}}, nil
}

// fakeNodeClient records the operations it is asked for.
type fakeNodeClient struct {
	dirs      map[string]string // alloc dirs by alloc ID
	signalErr error
	timelines map[string][]structs.TimelineEntry // by alloc ID

	mu    sync.Mutex // guards the fields below
	calls []string
	// dynamic is the node's dynamic metadata (static: fakeStaticMeta).
	dynamic map[string]*string
}

// fakeStaticMeta is the fake node's static metadata.
func fakeStaticMeta() map[string]string {
	return map[string]string{"rack": "r1", "connect.log_level": "info"}
}

// NodeMeta returns the fake node's metadata.
func (f *fakeNodeClient) NodeMeta() *structs.NodeMeta {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &structs.NodeMeta{Meta: structs.MergeNodeMeta(fakeStaticMeta(), f.dynamic), Dynamic: maps.Clone(f.dynamic), Static: fakeStaticMeta()}
}

// ApplyNodeMeta applies changes as the client does, with its key rules.
func (f *fakeNodeClient) ApplyNodeMeta(changes map[string]*string) (*structs.NodeMeta, error) {
	if err := structs.ValidateNodeMetaChanges(changes); err != nil {
		return nil, err
	}
	f.record(fmt.Sprintf("meta apply %d", len(changes)))
	f.mu.Lock()
	if f.dynamic == nil {
		f.dynamic = map[string]*string{}
	}
	maps.Copy(f.dynamic, changes)
	f.mu.Unlock()
	return f.NodeMeta(), nil
}

func (f *fakeNodeClient) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeNodeClient) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeNodeClient) NodeID() string { return testNodeID }

func (f *fakeNodeClient) AllocDir(id string) (string, error) {
	d, ok := f.dirs[id]
	if !ok {
		return "", structs.NotFound("allocation", id)
	}
	return d, nil
}

func (f *fakeNodeClient) RestartAlloc(_ context.Context, id, task string, all bool) error {
	f.record("restart " + id + " task=" + task + " all=" + map[bool]string{true: "true", false: "false"}[all])
	return nil
}

func (f *fakeNodeClient) SignalAlloc(_ context.Context, id, task, sig string) error {
	f.record("signal " + id + " task=" + task + " " + sig)
	return f.signalErr
}

func (f *fakeNodeClient) CollectAllGarbage(context.Context) ([]string, error) {
	f.record("gc all")
	return []string{"done-1"}, nil
}

func (f *fakeNodeClient) CollectAlloc(_ context.Context, id string) error {
	f.record("gc " + id)
	return nil
}

// The rest of NodeClient: no snapshots, no resource samples, the host's
// own statistics, no devices.

func (f *fakeNodeClient) SnapshotAlloc(id string, _ io.Writer) error {
	return structs.Invalid("the fake cannot snapshot %s", id)
}

func (f *fakeNodeClient) AllocTaskStats(string) (map[string]*drivers.TaskResourceUsage, error) {
	return nil, nil
}

func (f *fakeNodeClient) HostStats() (*stats.HostStats, error) {
	return stats.NewHostCollector(stats.HostConfig{}).Collect()
}

func (f *fakeNodeClient) TaskDeviceStats(*structs.Allocation) map[string][]*device.DeviceGroupStats {
	return nil
}

func (f *fakeNodeClient) HostDeviceStats() []*device.DeviceGroupStats { return nil }

func (f *fakeNodeClient) AllocTimeline(id string) []structs.TimelineEntry { return f.timelines[id] }

func (f *fakeNodeClient) AllocChecks(string) (map[string]*structs.CheckQueryResult, error) {
	return map[string]*structs.CheckQueryResult{}, nil
}

func (f *fakeNodeClient) NodeIdentityClaims(context.Context) (map[string]any, error) {
	f.record("identity")
	return map[string]any{"nomad_node_id": testNodeID, "sub": "node:global:default:" + testNodeID + ":default"}, nil
}

func (f *fakeNodeClient) RenewNodeIdentity() { f.record("renew identity") }

// serveAPI serves the API over rpc with nc as the agent's client (nil:
// none).
func serveAPI(t testing.TB, rpc rpcapi.Conn, nc NodeClient) (*Server, *httptest.Server) {
	t.Helper()
	hs := New(nil, &Config{RPC: rpc, Agent: fakeInfo{}, Client: nc, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(hs.forwarder.close)
	t.Cleanup(ts.Close)
	return hs, ts
}

func testAlloc(id, node string, tasks ...string) *structs.Allocation {
	tg := &structs.TaskGroup{Name: "g", Count: 1}
	for _, t := range tasks {
		tg.Tasks = append(tg.Tasks, &structs.Task{Name: t, Driver: "mock_driver"})
	}
	return &structs.Allocation{ID: id, NodeID: node, Namespace: "default", JobID: "web", TaskGroup: "g",
		Job: &structs.Job{ID: "web", Namespace: "default", TaskGroups: []*structs.TaskGroup{tg}}}
}

// newOpsServer serves the API with a client whose allocations are
// local-1 (one task "web"), local-2 (tasks "a" and "b"), and remote-1 on
// another node. local-1's directory is returned.
func newOpsServer(t *testing.T, nc *fakeNodeClient, withClient bool) (*httptest.Server, *opsBackend, string) {
	t.Helper()
	root := t.TempDir()
	if nc.dirs == nil {
		nc.dirs = map[string]string{"local-1": root, "local-2": t.TempDir()}
	}
	b := &opsBackend{fakeBackend: &fakeBackend{}, allocs: []*structs.Allocation{
		testAlloc("local-1", testNodeID, "web"),
		testAlloc("local-2", testNodeID, "a", "b"),
		testAlloc("remote-1", otherNodeID, "web"),
	}}
	var client NodeClient
	if withClient {
		client = nc
	}
	_, ts := serveAPI(t, b.handlers(), client)
	return ts, b, nc.dirs["local-1"]
}

func do(t *testing.T, method, url, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestClientAllocOps(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		path      string
		body      string
		noClient  bool
		signalErr error
		wantCode  int
		wantBody  string
		wantCall  string
	}{
		{name: "restart all by default", method: "PUT", path: "/v1/client/allocation/local-1/restart", wantCode: 200, wantBody: `{"Index":0}`, wantCall: "restart local-1 task= all=false"},
		{name: "restart by prefix", method: "POST", path: "/v1/client/allocation/local-1/restart", body: `{"TaskName": "web"}`, wantCode: 200, wantCall: "restart local-1 task=web all=false"},
		{name: "restart all tasks", method: "PUT", path: "/v1/client/allocation/local-2/restart", body: `{"TaskName": "", "AllTasks": true}`, wantCode: 200, wantCall: "restart local-2 task= all=true"},
		{name: "restart both", method: "PUT", path: "/v1/client/allocation/local-1/restart", body: `{"TaskName": "web", "AllTasks": true}`, wantCode: 400, wantBody: "not both"},
		{name: "restart unknown task", method: "PUT", path: "/v1/client/allocation/local-1/restart", body: `{"TaskName": "nope"}`, wantCode: 404, wantBody: `task "nope" not found`},
		{name: "restart unknown alloc", method: "PUT", path: "/v1/client/allocation/zzz/restart", wantCode: 404, wantBody: `allocation "zzz" not found`},
		{name: "restart bad field", method: "PUT", path: "/v1/client/allocation/local-1/restart", body: `{"Task": "web"}`, wantCode: 400, wantBody: "unknown field Task"},
		{name: "restart alloc of an unknown node", method: "PUT", path: "/v1/client/allocation/remote-1/restart", wantCode: 502, wantBody: "which the servers no longer know"},
		{name: "restart without client (forwarded to an unknown node)", method: "PUT", path: "/v1/client/allocation/local-1/restart", noClient: true, wantCode: 502, wantBody: "which the servers no longer know"},
		{name: "restart GET", method: "GET", path: "/v1/client/allocation/local-1/restart", wantCode: 405},
		{name: "signal", method: "PUT", path: "/v1/client/allocation/local-1/signal", body: `{"Signal": "SIGHUP", "Task": "web"}`, wantCode: 200, wantCall: "signal local-1 task=web SIGHUP"},
		{name: "signal default", method: "PUT", path: "/v1/client/allocation/local-2/signal", body: `{}`, wantCode: 200, wantCall: "signal local-2 task= SIGKILL"},
		{name: "signal lower case", method: "PUT", path: "/v1/client/allocation/local-1/signal", body: `{"Signal": "sigusr1"}`, wantCode: 200, wantCall: "signal local-1 task= SIGUSR1"},
		{name: "signal driver error", method: "PUT", path: "/v1/client/allocation/local-1/signal", body: `{"Signal": "SIGHUP"}`, signalErr: errors.New(`signal task "web": mock: signal refused`), wantCode: 500, wantBody: "mock: signal refused", wantCall: "signal local-1 task= SIGHUP"},
		{name: "signal not running", method: "PUT", path: "/v1/client/allocation/local-1/signal", body: `{"Signal": "SIGHUP"}`, signalErr: structs.NewError(structs.KindConflict, `task "web" is not running`), wantCode: 409, wantBody: "is not running", wantCall: "signal local-1 task= SIGHUP"},
		{name: "stop", method: "PUT", path: "/v1/allocation/local-1/stop", wantCode: 200, wantBody: `{"EvalID":"eval-stop","Index":42}`},
		{name: "stop remote alloc", method: "POST", path: "/v1/allocation/remote-1/stop", wantCode: 200, wantBody: `"EvalID":"eval-stop"`},
		{name: "stop unknown", method: "PUT", path: "/v1/allocation/zzz/stop", wantCode: 404, wantBody: `allocation "zzz" not found`},
		{name: "client gc", method: "PUT", path: "/v1/client/gc", wantCode: 200, wantBody: `{"Collected":["done-1"]}`, wantCall: "gc all"},
		{name: "client gc GET (Nomad's api)", method: "GET", path: "/v1/client/gc?node_id=node-0001", wantCode: 200, wantCall: "gc all"},
		{name: "client gc unknown node", method: "GET", path: "/v1/client/gc?node_id=node-0002", wantCode: 404, wantBody: `node "node-0002" not found`},
		{name: "system gc", method: "PUT", path: "/v1/system/gc", wantCode: 200, wantBody: `{"Collected":["done-1"]}`, wantCall: "gc all"},
		{name: "system gc without client: the servers' only", method: "PUT", path: "/v1/system/gc", noClient: true, wantCode: 200, wantBody: `{"Collected":[]}`},
		{name: "alloc gc", method: "GET", path: "/v1/client/allocation/local-1/gc", wantCode: 200, wantCall: "gc local-1"},
		{name: "node identity", method: "GET", path: "/v1/client/identity", wantCode: 200, wantBody: `{"Claims":{"nomad_node_id":"` + testNodeID + `",`, wantCall: "identity"},
		{name: "node identity of this node", method: "GET", path: "/v1/client/identity?node_id=node-0001", wantCode: 200, wantBody: `"sub":"node:global:default:` + testNodeID + `:default"`, wantCall: "identity"},
		{name: "node identity of an unknown node", method: "GET", path: "/v1/client/identity?node_id=node-0002", wantCode: 404, wantBody: `node "node-0002" not found`},
		{name: "node identity without client", method: "GET", path: "/v1/client/identity", noClient: true, wantCode: 400, wantBody: "runs no client"},
		{name: "node identity renew (Nomad's api posts)", method: "POST", path: "/v1/client/identity/renew", body: `{"NodeID":"node-0001"}`, wantCode: 200, wantBody: `{}`, wantCall: "renew identity"},
		{name: "node identity renew PUT", method: "PUT", path: "/v1/client/identity/renew", wantCode: 200, wantCall: "renew identity"},
		{name: "node identity renew GET", method: "GET", path: "/v1/client/identity/renew", wantCode: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc := &fakeNodeClient{signalErr: tt.signalErr}
			ts, b, _ := newOpsServer(t, nc, !tt.noClient)
			code, body, hdr := do(t, tt.method, ts.URL+tt.path, tt.body)
			if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
				t.Fatalf("%s %s = %d %q, want %d with %q", tt.method, tt.path, code, body, tt.wantCode, tt.wantBody)
			}
			calls := nc.recorded()
			if tt.wantCall == "" && len(calls) > 0 {
				t.Errorf("client calls = %v, want none", calls)
			}
			if tt.wantCall != "" && (len(calls) != 1 || calls[0] != tt.wantCall) {
				t.Errorf("client calls = %v, want [%s]", calls, tt.wantCall)
			}
			if strings.Contains(tt.path, "/stop") && code == 200 {
				if hdr.Get("X-Nomad-Index") != "42" || len(b.stops) != 1 {
					t.Errorf("stop: index header %q, stops %v", hdr.Get("X-Nomad-Index"), b.stops)
				}
			}
		})
	}
}

func TestClientFS(t *testing.T) {
	nc := &fakeNodeClient{}
	ts, _, root := newOpsServer(t, nc, true)
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "alloc", "logs"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "web", "local"), 0o755))
	must(os.WriteFile(filepath.Join(root, "web", "local", "hello.txt"), []byte("hello, world\n"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "web", "escape")))
	must(os.Symlink(outside, filepath.Join(root, "web", "escape-dir")))
	must(os.Symlink("local/hello.txt", filepath.Join(root, "web", "inside")))
	// Drover's own files (a shim's spec holds the task's environment) are
	// hidden, even through a link a task planted.
	must(os.MkdirAll(filepath.Join(root, ".shims", "web-1"), 0o700))
	must(os.WriteFile(filepath.Join(root, ".shims", "web-1", "spec.json"), []byte("s3cret"), 0o600))
	must(os.Symlink("../.shims/web-1/spec.json", filepath.Join(root, "web", "to-shims")))
	must(syscall.Mkfifo(filepath.Join(root, "web", "local", "fifo"), 0o666))

	tests := []struct {
		name     string
		path     string
		wantCode int
		wantBody string // substring, or the whole body when exact
		exact    bool
	}{
		{name: "ls root", path: "/v1/client/fs/ls/local-1", wantCode: 200, wantBody: `[{"Name":"alloc","IsDir":true,"Size":`},
		{name: "ls dir", path: "/v1/client/fs/ls/local-1?path=/web/local", wantCode: 200, wantBody: `"Name":"hello.txt","IsDir":false,"Size":13,"FileMode":"-rw-r--r--"`},
		{name: "ls content type", path: "/v1/client/fs/ls/local-1?path=web/local", wantCode: 200, wantBody: `"ContentType":"text/plain; charset=utf-8"`},
		{name: "ls file", path: "/v1/client/fs/ls/local-1?path=web/local/hello.txt", wantCode: 400, wantBody: "is a file, not a directory"},
		{name: "stat", path: "/v1/client/fs/stat/local-1?path=web/local/hello.txt", wantCode: 200, wantBody: `{"Name":"hello.txt","IsDir":false,"Size":13`},
		{name: "cat", path: "/v1/client/fs/cat/local-1?path=web/local/hello.txt", wantCode: 200, wantBody: "hello, world\n", exact: true},
		{name: "cat dir", path: "/v1/client/fs/cat/local-1?path=web", wantCode: 400, wantBody: "is a directory"},
		{name: "cat symlink inside", path: "/v1/client/fs/cat/local-1?path=web/inside", wantCode: 200, wantBody: "hello, world\n", exact: true},
		{name: "readat", path: "/v1/client/fs/readat/local-1?path=web/local/hello.txt&offset=7&limit=5", wantCode: 200, wantBody: "world", exact: true},
		{name: "readat to end", path: "/v1/client/fs/readat/local-1?path=web/local/hello.txt&offset=7", wantCode: 200, wantBody: "world\n", exact: true},
		{name: "readat bad offset", path: "/v1/client/fs/readat/local-1?path=web/local/hello.txt&offset=-1", wantCode: 400, wantBody: `offset="-1" is invalid`},
		{name: "dotdot escape", path: "/v1/client/fs/cat/local-1?path=../../etc/passwd", wantCode: 403, wantBody: "outside the allocation directory"},
		{name: "dotdot escape in the middle", path: "/v1/client/fs/ls/local-1?path=web/../../", wantCode: 403, wantBody: "outside the allocation directory"},
		{name: "dotdot inside", path: "/v1/client/fs/cat/local-1?path=web/../web/local/hello.txt", wantCode: 200, wantBody: "hello"},
		{name: "symlink escape", path: "/v1/client/fs/cat/local-1?path=web/escape", wantCode: 403, wantBody: "symlink that points outside"},
		{name: "symlink dir escape", path: "/v1/client/fs/ls/local-1?path=web/escape-dir", wantCode: 403, wantBody: "symlink that points outside"},
		{name: "through symlink dir", path: "/v1/client/fs/cat/local-1?path=web/escape-dir/secret", wantCode: 403, wantBody: "symlink that points outside"},
		{name: "missing", path: "/v1/client/fs/stat/local-1?path=nope", wantCode: 404, wantBody: `no such file or directory in the allocation: "nope"`},
		{name: "ls root hides .shims", path: "/v1/client/fs/ls/local-1?path=/", wantCode: 200, wantBody: `[{"Name":"alloc"`},
		{name: "ls .shims", path: "/v1/client/fs/ls/local-1?path=.shims", wantCode: 404, wantBody: "no such file or directory"},
		{name: "stat .shims", path: "/v1/client/fs/stat/local-1?path=/.shims/web-1", wantCode: 404, wantBody: "no such file or directory"},
		{name: "cat shim spec", path: "/v1/client/fs/cat/local-1?path=.shims/web-1/spec.json", wantCode: 404, wantBody: "no such file or directory"},
		{name: "cat link to shim spec", path: "/v1/client/fs/cat/local-1?path=web/to-shims", wantCode: 404, wantBody: "no such file or directory"},
		{name: "cat fifo does not block", path: "/v1/client/fs/cat/local-1?path=web/local/fifo", wantCode: 400, wantBody: "is a FIFO"},
		{name: "unknown alloc", path: "/v1/client/fs/ls/zzz", wantCode: 404, wantBody: `allocation "zzz" not found`},
		{name: "alloc of an unknown node", path: "/v1/client/fs/ls/remote-1", wantCode: 502, wantBody: "which the servers no longer know"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := do(t, "GET", ts.URL+tt.path, "")
			ok := strings.Contains(body, tt.wantBody)
			if tt.exact {
				ok = body == tt.wantBody
			}
			if code != tt.wantCode || !ok {
				t.Errorf("GET %s = %d %q, want %d with %q", tt.path, code, body, tt.wantCode, tt.wantBody)
			}
			if strings.Contains(body, "s3cret") {
				t.Errorf("leaked a file outside the alloc dir")
			}
		})
	}
}
