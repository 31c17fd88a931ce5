package command

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

const opsAllocID = "a1b2c3d4-1111-2222-3333-444455556666"

// opsAgent is a fake agent that knows one allocation whose group has the
// tasks given, and records the bodies of writes.
type opsAgent struct {
	*fakeAgent
	mu     sync.Mutex // guards the field below
	bodies []string
}

func newOpsAgent(t *testing.T, tasks ...string) *opsAgent {
	f := &opsAgent{fakeAgent: newFakeAgent(t)}
	var ts []*api.Task
	for _, name := range tasks {
		ts = append(ts, &api.Task{Name: name, Driver: "mock_driver"})
	}
	alloc := &api.Allocation{ID: opsAllocID, JobID: "web", TaskGroup: "g", NodeID: "node-1",
		Job: &api.Job{ID: api.String("web"), TaskGroups: []*api.TaskGroup{{Name: api.String("g"), Tasks: ts}}}}
	f.mux.HandleFunc("GET /v1/allocations", func(w http.ResponseWriter, r *http.Request) {
		out := []*api.AllocationListStub{}
		if strings.HasPrefix(opsAllocID, r.URL.Query().Get("prefix")) {
			out = append(out, &api.AllocationListStub{ID: opsAllocID, JobID: "web", TaskGroup: "g"})
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	f.json("GET /v1/allocation/"+opsAllocID, alloc)
	return f
}

// record answers pattern with answer after recording the request body.
func (f *opsAgent) record(pattern string, status int, answer string) {
	f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, strings.TrimSpace(string(b)))
		f.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	})
}

func (f *opsAgent) lastBody() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) == 0 {
		return ""
	}
	return f.bodies[len(f.bodies)-1]
}

func TestAllocRestartSignal(t *testing.T) {
	tests := []struct {
		name     string
		tasks    []string
		args     []string
		status   int
		answer   string
		wantCode int
		wantOut  string
		wantErr  string
		wantBody string
	}{
		{name: "restart running tasks", tasks: []string{"web"}, args: []string{"alloc", "restart", "a1b2"},
			wantOut: "Restarted the running tasks of allocation a1b2c3d4\n", wantBody: `{"TaskName":"","AllTasks":false}`},
		{name: "restart task by argument", tasks: []string{"web", "side"}, args: []string{"alloc", "restart", "a1b2", "side"},
			wantOut: `Restarted task "side" of allocation a1b2c3d4`, wantBody: `{"TaskName":"side","AllTasks":false}`},
		{name: "restart task by flag", tasks: []string{"web"}, args: []string{"alloc", "restart", "-task", "web", "a1b2"},
			wantOut: `Restarted task "web"`, wantBody: `{"TaskName":"web","AllTasks":false}`},
		{name: "restart all tasks", tasks: []string{"web"}, args: []string{"alloc", "restart", "-all-tasks", "a1b2"},
			wantOut: "Restarted all tasks of allocation a1b2c3d4\n", wantBody: `{"TaskName":"","AllTasks":true}`},
		{name: "restart all and a task", tasks: []string{"web"}, args: []string{"alloc", "restart", "-all-tasks", "a1b2", "web"},
			wantCode: 1, wantErr: "-all-tasks restarts every task"},
		{name: "restart all and -task", tasks: []string{"web"}, args: []string{"alloc", "restart", "-task", "web", "-all-tasks", "a1b2"},
			wantCode: 1, wantErr: "-all-tasks restarts every task"},
		{name: "restart task twice", tasks: []string{"web"}, args: []string{"alloc", "restart", "-task", "a", "a1b2", "b"},
			wantCode: 1, wantErr: "the task is named twice"},
		{name: "restart unknown task", tasks: []string{"web", "side"}, args: []string{"alloc", "restart", "a1b2", "nope"},
			wantCode: 1, wantErr: `has no task "nope"; its tasks are: side, web`},
		{name: "restart on another node", tasks: []string{"web"}, args: []string{"alloc", "restart", "a1b2"},
			status: 400, answer: "allocation a1b2 runs on node n2: forwarding to other agents is not supported yet",
			wantCode: 1, wantErr: "Error restarting allocation a1b2c3d4: allocation a1b2 runs on node n2: forwarding"},
		{name: "signal", tasks: []string{"web"}, args: []string{"alloc", "signal", "-s", "hup", "a1b2", "web"},
			wantOut: `Sent SIGHUP to task "web" of allocation a1b2c3d4`, wantBody: `{"Task":"web","Signal":"SIGHUP"}`},
		{name: "signal default", tasks: []string{"web"}, args: []string{"alloc", "signal", "a1b2"},
			wantOut: "Sent SIGKILL to the running tasks", wantBody: `{"Task":"","Signal":"SIGKILL"}`},
		{name: "signal driver error", tasks: []string{"web"}, args: []string{"alloc", "signal", "-s", "SIGUSR1", "a1b2"},
			status: 500, answer: `signal task "web": mock: signal refused`,
			wantCode: 1, wantErr: `Error signalling allocation a1b2c3d4: signal task "web": mock: signal refused`},
		{name: "no alloc", tasks: []string{"web"}, args: []string{"alloc", "signal"}, wantCode: 1, wantErr: "Usage: drover alloc signal"},
		{name: "unknown alloc", tasks: []string{"web"}, args: []string{"alloc", "restart", "ffff"}, wantCode: 1, wantErr: `No allocation(s) with prefix or ID "ffff" found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOpsAgent(t, tt.tasks...)
			status := tt.status
			if status == 0 {
				status, tt.answer = 200, "{}"
			}
			f.record("PUT /v1/client/allocation/"+opsAllocID+"/restart", status, tt.answer)
			f.record("PUT /v1/client/allocation/"+opsAllocID+"/signal", status, tt.answer)
			r := runCLI(t, f.srv.URL, nil, tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stdout, tt.wantOut) || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if tt.wantBody != "" && f.lastBody() != tt.wantBody {
				t.Errorf("body = %s, want %s", f.lastBody(), tt.wantBody)
			}
		})
	}
}

func TestAllocStop(t *testing.T) {
	f := newOpsAgent(t, "web")
	f.record("PUT /v1/allocation/"+opsAllocID+"/stop", 200, `{"EvalID":"`+evalID+`","Index":12}`)
	f.json("GET /v1/evaluation/"+evalID, &api.Evaluation{ID: evalID, JobID: "web", Status: "complete"})
	f.json("GET /v1/evaluation/"+evalID+"/allocations", []*api.AllocationListStub{})
	r := runCLI(t, f.srv.URL, nil, "alloc", "stop", "-detach", "a1b2")
	if r.code != 0 || r.stdout != evalID+"\n" {
		t.Errorf("detach: %+v", r)
	}
	r = runCLI(t, f.srv.URL, nil, "alloc", "stop", "a1b2")
	if r.code != 0 || !strings.Contains(r.stdout, "Stopped allocation a1b2c3d4; evaluation") ||
		!strings.Contains(r.stdout, `finished with status "complete"`) {
		t.Errorf("monitor: %+v", r)
	}
}

func TestSystemGC(t *testing.T) {
	f := newOpsAgent(t)
	f.record("PUT /v1/system/gc", 200, `{"Collected":["`+opsAllocID+`","ffffffff-0000"]}`)
	r := runCLI(t, f.srv.URL, nil, "system", "gc")
	if r.code != 0 || r.stdout != "Garbage collection done: removed 2 terminal allocations: a1b2c3d4, ffffffff\n" {
		t.Errorf("%+v", r)
	}
	g := newOpsAgent(t)
	g.record("PUT /v1/system/gc", 200, `{"Collected":[]}`)
	r = runCLI(t, g.srv.URL, nil, "system", "gc")
	if r.code != 0 || !strings.Contains(r.stdout, "no terminal allocations to remove") {
		t.Errorf("nothing to collect: %+v", r)
	}
}

// logLines is the fake log: 40 lines spread over files of 100 bytes.
func logLines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	return b.String()
}

// serveLogs answers the logs endpoint from text as an agent does: frames of
// at most 100 bytes, each from its own "file", from offset relative to
// origin. With follow, more is sent after a pause, then the stream ends.
func serveLogs(t *testing.T, f *opsAgent, text, more string, queries *[]string, mu *sync.Mutex) {
	f.mux.HandleFunc("GET /v1/client/fs/logs/"+opsAllocID, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		*queries = append(*queries, r.URL.RawQuery)
		mu.Unlock()
		off, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
		start := min(int(off), len(text))
		if q.Get("origin") == "end" {
			start = max(len(text)-int(off), 0)
		}
		enc := json.NewEncoder(w)
		send := func(data string, base int) {
			for i := 0; i < len(data); i += 100 {
				end := min(i+100, len(data))
				file := fmt.Sprintf("alloc/logs/%s.%s.%d", q.Get("task"), q.Get("type"), (base+i)/100)
				_ = enc.Encode(api.StreamFrame{File: file, Offset: int64(end), Data: []byte(data[i:end])})
			}
		}
		send(text[start:], start)
		if q.Get("follow") == "true" {
			_ = enc.Encode(api.StreamFrame{}) // a heartbeat
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond) // a pause in the stream, not a wait for an event
			send(more, len(text))
		}
	})
}

func TestAllocLogs(t *testing.T) {
	text := logLines(0, 40)
	tests := []struct {
		name      string
		tasks     []string
		args      []string
		wantCode  int
		wantOut   string
		wantErr   string
		wantQuery string
	}{
		{name: "all", tasks: []string{"web"}, args: []string{"a1b2"}, wantOut: text, wantQuery: "follow=false&offset=0&origin=start&task=web&type=stdout"},
		{name: "stderr of a named task", tasks: []string{"web", "side"}, args: []string{"-stderr", "a1b2", "side"}, wantOut: text, wantQuery: "task=side&type=stderr"},
		{name: "tail", tasks: []string{"web"}, args: []string{"-tail", "a1b2"}, wantOut: logLines(30, 40), wantQuery: "origin=end"},
		{name: "tail -n", tasks: []string{"web"}, args: []string{"-n", "3", "a1b2"}, wantOut: logLines(37, 40)},
		{name: "tail more than there is", tasks: []string{"web"}, args: []string{"-tail", "-n", "100", "a1b2"}, wantOut: text},
		{name: "tail -n 0", tasks: []string{"web"}, args: []string{"-n", "0", "a1b2"}, wantOut: ""},
		{name: "tail -c", tasks: []string{"web"}, args: []string{"-c", "16", "a1b2"}, wantOut: logLines(38, 40), wantQuery: "offset=16&origin=end"},
		{name: "follow", tasks: []string{"web"}, args: []string{"-f", "a1b2"}, wantOut: text + logLines(40, 60), wantQuery: "follow=true"},
		{name: "follow tail", tasks: []string{"web"}, args: []string{"-f", "-n", "2", "a1b2"}, wantOut: logLines(38, 60), wantQuery: "follow=true&offset=16&origin=end"},
		{name: "task needed", tasks: []string{"web", "side"}, args: []string{"a1b2"}, wantCode: 1, wantErr: "has 2 tasks (side, web): name the task"},
		{name: "unknown task", tasks: []string{"web"}, args: []string{"a1b2", "nope"}, wantCode: 1, wantErr: `has no task "nope"`},
		{name: "-n and -c", tasks: []string{"web"}, args: []string{"-n", "1", "-c", "1", "a1b2"}, wantCode: 1, wantErr: "-n and -c are exclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOpsAgent(t, tt.tasks...)
			var mu sync.Mutex
			var queries []string
			serveLogs(t, f, text, logLines(40, 60), &queries, &mu)
			r := runCLI(t, f.srv.URL, nil, append([]string{"alloc", "logs"}, tt.args...)...)
			if r.code != tt.wantCode || r.stdout != tt.wantOut || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("exit %d\nstdout: %q\nwant:   %q\nstderr: %s", r.code, r.stdout, tt.wantOut, r.stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.wantQuery != "" && (len(queries) == 0 || !strings.Contains(queries[len(queries)-1], tt.wantQuery)) {
				t.Errorf("queries = %q, want the last with %q", queries, tt.wantQuery)
			}
		})
	}
}

func TestAllocFS(t *testing.T) {
	f := newOpsAgent(t, "web")
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.mux.HandleFunc("GET /v1/client/fs/stat/"+opsAllocID, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Query().Get("path"); p {
		case "/", "web":
			_ = json.NewEncoder(w).Encode(api.AllocFileInfo{Name: "web", IsDir: true, Size: 4096, FileMode: "drwxr-xr-x", ModTime: mod})
		case "web/local/hello.txt":
			_ = json.NewEncoder(w).Encode(api.AllocFileInfo{Name: "hello.txt", Size: 6, FileMode: "-rw-r--r--", ModTime: mod, ContentType: "text/plain"})
		default:
			http.Error(w, "path \"../x\" is outside the allocation directory", http.StatusForbidden)
		}
	})
	f.json("GET /v1/client/fs/ls/"+opsAllocID, []*api.AllocFileInfo{
		{Name: "alloc", IsDir: true, Size: 4096, FileMode: "drwxrwxrwt", ModTime: mod},
		{Name: "big.bin", Size: 3 << 20, FileMode: "-rw-r--r--", ModTime: mod},
	})
	f.mux.HandleFunc("GET /v1/client/fs/cat/"+opsAllocID, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello\n")
	})
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{args: []string{"a1b2"}, wantOut: "Mode        Size     Modified Time         Name\n" +
			"drwxrwxrwt  4096     2026-01-02T03:04:05Z  alloc/\n" +
			"-rw-r--r--  3145728  2026-01-02T03:04:05Z  big.bin\n"},
		{args: []string{"-H", "a1b2", "web"}, wantOut: "Mode        Size     Modified Time         Name\n" +
			"drwxrwxrwt  4.0 KiB  2026-01-02T03:04:05Z  alloc/\n" +
			"-rw-r--r--  3.0 MiB  2026-01-02T03:04:05Z  big.bin\n"},
		{args: []string{"a1b2", "web/local/hello.txt"}, wantOut: "hello\n"},
		{args: []string{"-stat", "a1b2", "web/local/hello.txt"}, wantOut: "Mode        Size  Modified Time         Name       Content Type\n" +
			"-rw-r--r--  6     2026-01-02T03:04:05Z  hello.txt  text/plain\n"},
		{args: []string{"a1b2", "../x"}, wantCode: 1, wantErr: `Error reading "../x" in allocation a1b2c3d4: path "../x" is outside the allocation directory`},
	}
	for _, tt := range tests {
		r := runCLI(t, f.srv.URL, nil, append([]string{"alloc", "fs"}, tt.args...)...)
		if r.code != tt.wantCode || r.stdout != tt.wantOut || !strings.Contains(r.stderr, tt.wantErr) {
			t.Errorf("alloc fs %v: exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", tt.args, r.code, r.stdout, tt.wantOut, r.stderr)
		}
	}
}
