package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// ExecAlloc completes fakeNodeClient's NodeClient: the plain fake cannot
// exec (execNodeClient can).
func (f *fakeNodeClient) ExecAlloc(_ context.Context, allocID, task string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	if opts.Stdin != nil {
		opts.Stdin.Close()
	}
	return nil, structs.Invalid("the fake cannot exec in %s", allocID)
}

// execNodeClient runs execs in a mock driver's task "t1", whose streaming
// exec prints its banner, echoes stdin and reports terminal sizes. It
// records each exec's outcome.
type execNodeClient struct {
	*fakeNodeClient
	d    *mock.Driver
	ends chan error // each exec's error (nil: exited), if there is room
}

func newExecNodeClient(t testing.TB, banner string, code int) *execNodeClient {
	t.Helper()
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	raw, err := json.Marshal(mock.TaskConfig{RunFor: mock.Duration(time.Hour), ExecCommand: &mock.ExecCommand{StdoutString: banner, ExitCode: code}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.StartTask(context.Background(), &drivers.TaskConfig{ID: "t1", Name: "web", RawConfig: raw}); err != nil {
		t.Fatal(err)
	}
	return &execNodeClient{fakeNodeClient: &fakeNodeClient{}, d: d, ends: make(chan error, 16)}
}

func (c *execNodeClient) ExecAlloc(ctx context.Context, allocID, task string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	c.record("exec " + allocID + " task=" + task + " " + strings.Join(opts.Command, " "))
	res, err := c.d.ExecTaskStreaming(ctx, "t1", opts)
	select {
	case c.ends <- err:
	default:
	}
	return res, err
}

// execServer serves the API of an agent running local-1 (task web) and
// local-2 (tasks a and b) with nc as its client.
func execServer(t testing.TB, nc NodeClient) (*Server, *httptest.Server) {
	t.Helper()
	b := &opsBackend{fakeBackend: &fakeBackend{}, allocs: []*structs.Allocation{
		testAlloc("local-1", testNodeID, "web"),
		testAlloc("local-2", testNodeID, "a", "b"),
	}}
	return serveAPI(t, b.handlers(), nc)
}

// lockedBuffer collects output written from another goroutine and signals
// each write on wrote (when it has room).
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func newLockedBuffer() *lockedBuffer { return &lockedBuffer{wrote: make(chan struct{}, 1)} }

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until the buffer holds s.
func (l *lockedBuffer) waitFor(s string) {
	for !strings.Contains(l.String(), s) {
		<-l.wrote
	}
}

func apiClient(t testing.TB, ts *httptest.Server) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAllocExec(t *testing.T) {
	nc := newExecNodeClient(t, "banner\n", 3)
	_, ts := execServer(t, nc)
	c := apiClient(t, ts)

	// stdin, output and the exit code; the only task is the default.
	out := newLockedBuffer()
	code, err := c.Allocations().Exec(context.Background(), "local-1", &api.ExecRequest{
		Command: []string{"/bin/sh", "-c", "cat"}, Stdin: strings.NewReader("piped input\n"), Stdout: out,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 || out.String() != "banner\npiped input\n" {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
	if got := nc.recorded(); len(got) != 1 || got[0] != "exec local-1 task=web /bin/sh -c cat" {
		t.Fatalf("execs = %q", got)
	}

	// A terminal: its initial size and later sizes reach the driver.
	pr, pw := io.Pipe()
	resize := make(chan api.TerminalSize)
	tty := newLockedBuffer()
	done := make(chan error, 1)
	go func() {
		_, err := c.Allocations().Exec(context.Background(), "local-2", &api.ExecRequest{
			Task: "b", Command: []string{"sh"}, TTY: true, Stdin: pr, Stdout: tty,
			Size: api.TerminalSize{Height: 30, Width: 90}, Resize: resize,
		}, nil)
		done <- err
	}()
	tty.waitFor("size 30x90\n")
	resize <- api.TerminalSize{Height: 40, Width: 100}
	tty.waitFor("size 40x100\n")
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Nomad's own Go client runs a session against the endpoint.
func TestAllocExecNomadClient(t *testing.T) {
	nc := newExecNodeClient(t, "", 0)
	_, ts := execServer(t, nc)
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	sizes := make(chan nomadapi.TerminalSize)
	code, err := c.Allocations().Exec(context.Background(), &nomadapi.Allocation{ID: "local-1", NodeID: testNodeID}, "web",
		false, []string{"cat"}, strings.NewReader("from nomad's client\n"), &stdout, &stderr, sizes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || stdout.String() != "from nomad's client\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestAllocExecBadRequests(t *testing.T) {
	nc := newExecNodeClient(t, "", 0)
	_, ts := execServer(t, nc)
	cases := []struct {
		name, query string
		status      int
		want        string
	}{
		{"no command", "task=web", http.StatusBadRequest, "missing command"},
		{"command not JSON", "task=web&command=sh", http.StatusBadRequest, "JSON array"},
		{"empty command", "task=web&command=[]", http.StatusBadRequest, "empty command"},
		{"bad tty", `task=web&command=["sh"]&tty=maybe`, http.StatusBadRequest, "not a boolean"},
		{"bad tty size", `task=web&command=["sh"]&tty=true&tty_height=0&tty_width=80`, http.StatusBadRequest, "tty_height"},
		{"half a tty size", `task=web&command=["sh"]&tty=true&tty_width=80`, http.StatusBadRequest, "tty_height"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := ts.URL + "/v1/client/allocation/local-1/exec?" + (url.Values{}).Encode()
			u = strings.TrimSuffix(u, "?") + "?" + tc.query
			_, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(u, "http"), nil)
			if err == nil {
				t.Fatal("upgraded")
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("status %d body %q, want %d with %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	if got := nc.recorded(); len(got) != 0 {
		t.Fatalf("bad requests reached the client: %q", got)
	}
}

// TestAllocExecRefusedInSession: what stops an exec once its query is
// well formed (an unknown allocation or task, no task named among
// several) ends the upgraded session with a close frame carrying the
// error's status and text, as Nomad's agent does; an unknown allocation
// is Nomad's `Unknown allocation "ID"`, which Nomad's client returns as
// the error. A request that asks for no upgrade gets the HTTP error.
func TestAllocExecRefusedInSession(t *testing.T) {
	nc := newExecNodeClient(t, "", 0)
	_, ts := execServer(t, nc)
	ws := "ws" + strings.TrimPrefix(ts.URL, "http")
	cases := []struct {
		name, path, query string
		code              int
		reason            string
	}{
		{"unknown allocation", "/v1/client/allocation/zzz/exec", `task=web&command=["sh"]`, api.ExecCloseCodeBase + 404, `Unknown allocation "zzz"`},
		{"unknown task", "/v1/client/allocation/local-1/exec", `task=nope&command=["sh"]`, api.ExecCloseCodeBase + 404, `task "nope" not found`},
		{"two tasks, none named", "/v1/client/allocation/local-2/exec", `command=["sh"]`, api.ExecCloseCodeBase + 400, "name one with task="},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, resp, err := websocket.DefaultDialer.Dial(ws+tc.path+"?"+tc.query, nil)
			if err != nil {
				t.Fatalf("not upgraded: %v", err)
			}
			resp.Body.Close()
			defer conn.Close()
			ce, _ := readClose(t, conn)
			if ce.Code != tc.code || !strings.Contains(ce.Text, tc.reason) {
				t.Errorf("close %d %q, want %d %q", ce.Code, ce.Text, tc.code, tc.reason)
			}
		})
	}

	// Without an upgrade: the HTTP error.
	resp, err := http.Get(ts.URL + `/v1/client/allocation/zzz/exec?task=web&command=["sh"]`)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"zzz"`) {
		t.Errorf("plain GET: %d %q", resp.StatusCode, body)
	}

	// drover's client reports the status and text.
	_, err = apiClient(t, ts).Allocations().Exec(context.Background(), "local-2", &api.ExecRequest{Command: []string{"sh"}}, nil)
	var ue *api.UnexpectedResponseError
	if !errors.As(err, &ue) || ue.StatusCode != http.StatusBadRequest || !strings.Contains(ue.Message, "name one with task=") {
		t.Errorf("drover client, no task for two: %v", err)
	}

	// Nomad's client, as its TestAllocations_ExecErrors calls it.
	nomad, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	const id = "6f2c5f4c-9a4e-4e7b-8d47-7d1a4c3c2b10"
	alloc := &nomadapi.Allocation{ID: id, Namespace: "default", TaskGroup: "bar", NodeID: "elsewhere"}
	code, err := nomad.Allocations().Exec(context.Background(), alloc, "bar", false, []string{"command"},
		strings.NewReader(""), io.Discard, io.Discard, make(chan nomadapi.TerminalSize, 1), nil)
	if code != -2 || err == nil || err.Error() != `Unknown allocation "`+id+`"` {
		t.Errorf("Nomad's client: exit %d, error %v; want -2 and Unknown allocation %q", code, err, id)
	}
	if got := nc.recorded(); len(got) != 0 {
		t.Fatalf("refused requests reached the client: %q", got)
	}
}

// dialExec opens an exec session by hand.
func dialExec(t *testing.T, ts *httptest.Server, query string) *websocket.Conn {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/v1/client/allocation/local-1/exec?"+query, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readClose reads frames until the agent's close and returns it, with the
// stderr output before it (where a long error message comes).
func readClose(t *testing.T, conn *websocket.Conn) (*websocket.CloseError, string) {
	t.Helper()
	var stderr strings.Builder
	for {
		var out api.ExecStreamingOutput
		err := conn.ReadJSON(&out)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce, stderr.String()
		}
		if err != nil {
			t.Fatalf("read: %v, want a close frame", err)
		}
		if out.Stderr != nil {
			stderr.Write(out.Stderr.Data)
		}
	}
}

// A bad frame ends the session with a close saying what is wrong; the
// command is killed (the driver's call returns), the task untouched.
func TestAllocExecBadFrames(t *testing.T) {
	cases := []struct {
		name, frame string
		want        string
	}{
		{"bad tty size", `{"tty_size":{"height":-1,"width":80}}`, "invalid terminal size -1x80"},
		{"huge tty size", `{"tty_size":{"height":24,"width":70000}}`, "invalid terminal size"},
		{"not JSON", `{"stdin":`, "bad frame"},
		{"wrong type", `{"stdin":{"data":12}}`, "bad frame"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := newExecNodeClient(t, "", 0)
			_, ts := execServer(t, nc)
			conn := dialExec(t, ts, `task=web&tty=true&command=["sh"]`)
			if err := conn.WriteMessage(websocket.TextMessage, []byte(tc.frame)); err != nil {
				t.Fatal(err)
			}
			ce, stderr := readClose(t, conn)
			if ce.Code != api.ExecCloseCodeBase+http.StatusBadRequest || !strings.Contains(ce.Text+stderr, tc.want) {
				t.Fatalf("close %d %q (stderr %q), want %d with %q", ce.Code, ce.Text, stderr, api.ExecCloseCodeBase+400, tc.want)
			}
			if err := <-nc.ends; err == nil {
				t.Fatal("the command was not stopped")
			}
			if st, err := nc.d.InspectTask(context.Background(), "t1"); err != nil || st.State != drivers.TaskStateRunning {
				t.Fatalf("task after the bad frame: %+v, %v", st, err)
			}
		})
	}
}

// A caller that goes away ends the session and the command.
func TestAllocExecCallerGone(t *testing.T) {
	nc := newExecNodeClient(t, "", 0)
	_, ts := execServer(t, nc)
	conn := dialExec(t, ts, `task=web&command=["cat"]`)
	if err := conn.WriteJSON(api.ExecStreamingInput{Stdin: &api.ExecStreamingIOOperation{Data: []byte("hi\n")}}); err != nil {
		t.Fatal(err)
	}
	var out api.ExecStreamingOutput
	if err := conn.ReadJSON(&out); err != nil || out.Stdout == nil || string(out.Stdout.Data) != "hi\n" {
		t.Fatalf("echo: %+v, %v", out, err)
	}
	conn.NetConn().Close() // no close frame: the caller vanished
	if err := <-nc.ends; !errors.Is(err, context.Canceled) {
		t.Fatalf("exec after the caller left: %v, want it cancelled", err)
	}
}

// A caller that stops reading cannot hold the agent: the write times out,
// the session ends and the command is killed.
func TestAllocExecSlowCaller(t *testing.T) {
	// 16 MiB of output cannot fit in the sockets' buffers: the caller's
	// receive buffer is made small, and the server's send buffer grows to
	// net.ipv4.tcp_wmem's maximum (4 MiB by default; 2 MiB sometimes fit).
	nc := newExecNodeClient(t, strings.Repeat("x", 16<<20), 0)
	hs, ts := execServer(t, nc)
	hs.execTimes.write = 100 * time.Millisecond
	dialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
		}
		return c, err
	}}
	conn, resp, err := dialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+`/v1/client/allocation/local-1/exec?task=web&command=["cat"]`, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	defer conn.Close() // never read
	if err := <-nc.ends; err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("exec with a caller that does not read: %v, want a write timeout", err)
	}
}

// A caller silent past the silence timeout (no frames, no pongs: it does
// not read) ends the session.
func TestAllocExecSilentCaller(t *testing.T) {
	nc := newExecNodeClient(t, "", 0)
	hs, ts := execServer(t, nc)
	hs.execTimes.silence = 100 * time.Millisecond
	hs.execTimes.ping = time.Hour
	dialExec(t, ts, `task=web&command=["cat"]`)
	if err := <-nc.ends; !errors.Is(err, context.Canceled) {
		t.Fatalf("exec with a silent caller: %v, want it cancelled", err)
	}
}

// otherExecClient is an execNodeClient on the other node.
type otherExecClient struct{ *execNodeClient }

func (otherExecClient) NodeID() string { return otherNodeID }

// A session for an allocation of another node goes through this agent to
// that node's agent, WebSocket and all.
func TestAllocExecForwarded(t *testing.T) {
	remote := otherExecClient{newExecNodeClient(t, "from the other node\n", 5)}
	b := &nodesBackend{opsBackend: &opsBackend{fakeBackend: &fakeBackend{}, allocs: []*structs.Allocation{
		testAlloc("local-1", testNodeID, "web"),
		testAlloc("remote-1", otherNodeID, "web"),
	}}}
	_, other := serveAPI(t, b.handlers(), remote)
	b.nodes = []*structs.Node{{ID: otherNodeID, Name: "other", Status: structs.NodeStatusReady, HTTPAddr: other.Listener.Addr().String()}}
	_, ts := serveAPI(t, b.handlers(), &fakeNodeClient{})

	out := newLockedBuffer()
	code, err := apiClient(t, ts).Allocations().Exec(context.Background(), "remote-1", &api.ExecRequest{
		Task: "web", Command: []string{"cat"}, Stdin: strings.NewReader("through two agents\n"), Stdout: out,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code != 5 || out.String() != "from the other node\nthrough two agents\n" {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
	if got := remote.recorded(); len(got) != 1 || got[0] != "exec remote-1 task=web cat" {
		t.Fatalf("the other node's execs: %q", got)
	}
}

// BenchmarkAllocExecEcho: one exec session through the agent's HTTP API
// on loopback, with drover's Go client: the WebSocket upgrade, a stdin
// frame and its end, the mock driver's streaming exec echoing it, the
// stdout and exit frames, the close. The command itself costs nothing
// (the mock runs no process): this is the API's share of `alloc exec`'s
// round trip (bench/exec measures it with a real process).
func BenchmarkAllocExecEcho(b *testing.B) {
	nc := newExecNodeClient(b, "", 0)
	_, ts := execServer(b, nc)
	c := apiClient(b, ts)
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		code, err := c.Allocations().Exec(context.Background(), "local-1", &api.ExecRequest{
			Command: []string{"echo"}, Stdin: strings.NewReader("hi\n"), Stdout: &out}, nil)
		if err != nil || code != 0 || out.String() != "hi\n" {
			b.Fatalf("exec: exit %d, stdout %q, %v", code, out.String(), err)
		}
	}
}
