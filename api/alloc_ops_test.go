package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingAgent answers every request with body and records what it got.
func recordingAgent(t *testing.T, body string) (*Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+strings.TrimSpace(string(b)))
		mu.Unlock()
		w.Header().Set("X-Nomad-Index", "9")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

func TestAllocOpsRequests(t *testing.T) {
	alloc := &Allocation{ID: "a1"}
	tests := []struct {
		name string
		body string
		call func(c *Client) error
		want string
	}{
		{"restart task", "{}", func(c *Client) error { return c.Allocations().Restart(alloc, "web", nil) },
			`PUT /v1/client/allocation/a1/restart? {"TaskName":"web","AllTasks":false}`},
		{"restart all", "{}", func(c *Client) error { return c.Allocations().RestartAllTasks(alloc, nil) },
			`PUT /v1/client/allocation/a1/restart? {"TaskName":"","AllTasks":true}`},
		{"signal", "{}", func(c *Client) error { return c.Allocations().Signal(alloc, nil, "web", "SIGHUP") },
			`PUT /v1/client/allocation/a1/signal? {"Task":"web","Signal":"SIGHUP"}`},
		{"stop", `{"EvalID":"e1","Index":9}`, func(c *Client) error {
			r, err := c.Allocations().Stop(alloc, nil)
			if err == nil && (r.EvalID != "e1" || r.LastIndex != 9) {
				t.Errorf("stop response = %+v", r)
			}
			return err
		}, `PUT /v1/allocation/a1/stop? `},
		{"system gc", `{"Collected":["x"]}`, func(c *Client) error {
			r, err := c.System().GarbageCollect()
			if err == nil && (len(r.Collected) != 1 || r.Collected[0] != "x") {
				t.Errorf("gc response = %+v", r)
			}
			return err
		}, `PUT /v1/system/gc? `},
		{"ls", `[{"Name":"alloc","IsDir":true}]`, func(c *Client) error {
			l, _, err := c.AllocFS().List(alloc, "/", nil)
			if err == nil && (len(l) != 1 || !l[0].IsDir) {
				t.Errorf("ls = %+v", l)
			}
			return err
		}, `GET /v1/client/fs/ls/a1?path=%2F `},
		{"readat", `abc`, func(c *Client) error {
			r, err := c.AllocFS().ReadAt(alloc, "f", 3, 4, nil)
			if err != nil {
				return err
			}
			defer r.Close()
			b, _ := io.ReadAll(r)
			if string(b) != "abc" {
				t.Errorf("readat = %q", b)
			}
			return nil
		}, `GET /v1/client/fs/readat/a1?limit=4&offset=3&path=f `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, got := recordingAgent(t, tt.body)
			if err := tt.call(c); err != nil {
				t.Fatal(err)
			}
			if g := got(); len(g) != 1 || g[0] != tt.want {
				t.Errorf("requests = %q, want %q", g, tt.want)
			}
		})
	}
}

func TestAllocFSLogs(t *testing.T) {
	var frames strings.Builder
	enc := json.NewEncoder(&frames)
	for _, f := range []StreamFrame{{File: "alloc/logs/web.stdout.0", Offset: 3, Data: []byte("ab\n")}, {}, {File: "alloc/logs/web.stdout.1", Offset: 2, Data: []byte("c\n")}} {
		_ = enc.Encode(f)
	}
	c, got := recordingAgent(t, frames.String())
	ch, errCh := c.AllocFS().Logs(&Allocation{ID: "a1"}, false, "web", FSLogNameStdout, OriginStart, 0, nil, nil)
	var data strings.Builder
	n := 0
	for f := range ch {
		data.Write(f.Data)
		n++
	}
	select {
	case err := <-errCh:
		t.Fatal(err)
	default:
	}
	if data.String() != "ab\nc\n" || n != 2 {
		t.Errorf("logs = %q in %d frames", data.String(), n)
	}
	if g := got(); len(g) != 1 || !strings.Contains(g[0], "follow=false") || !strings.Contains(g[0], "type=stdout") {
		t.Errorf("request = %q", g)
	}
}

// TestAllocFSLogsErrorClosesFrames: when the agent refuses the request (404,
// 502 from a node that cannot be reached), ranging over the frames channel
// ends at once and the error is on errCh; a nil channel would block forever.
func TestAllocFSLogsErrorClosesFrames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `node "b1" at 127.0.0.1:1 cannot be reached`, http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ch, errCh := c.AllocFS().Logs(&Allocation{ID: "a1"}, true, "web", FSLogNameStdout, OriginStart, 0, nil, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ch {
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ranging over the frames of a failed request did not end")
	}
	if err := <-errCh; err == nil || !strings.Contains(err.Error(), "cannot be reached") {
		t.Fatalf("err = %v, want the agent's message", err)
	}
}
