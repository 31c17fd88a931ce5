package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/logmonitor"
	nomadapi "github.com/hashicorp/nomad/api"
)

// monitorServer serves the API with a monitor; the returned logger logs
// as the agent would.
func monitorServer(t *testing.T, set func(*Server)) (*slog.Logger, *httptest.Server) {
	t.Helper()
	m := logmonitor.New()
	hs := New(nil, &Config{RPC: (&fakeBackend{}).handlers(), Agent: fakeInfo{}, ParseJob: fakeParse,
		Logger: slog.New(slog.DiscardHandler), Monitor: m})
	if set != nil {
		set(hs)
	}
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return slog.New(m.Handler(slog.DiscardHandler)), ts
}

// nextLine returns the first line of the next frame's data.
func nextLine(t *testing.T, frames <-chan *api.StreamFrame, errs <-chan error) string {
	t.Helper()
	f, ok := <-frames
	if !ok {
		t.Fatalf("stream ended: %v", <-errs)
	}
	line, _, _ := strings.Cut(string(f.Data), "\n")
	return line
}

// A subscriber sees the lines logged after it joined, at its level and
// above, and no others.
func TestAgentMonitorLevels(t *testing.T) {
	logger, ts := monitorServer(t, nil)
	c := apiClient(t, ts)
	stop := make(chan struct{})
	defer close(stop)
	logger.Info("before anyone listens")
	// Monitor returns once the agent answered, that is once it subscribed.
	debugFrames, debugErrs := c.Agent().Monitor(stop, &api.QueryOptions{Params: map[string]string{"log_level": "debug"}})
	warnFrames, warnErrs := c.Agent().Monitor(stop, &api.QueryOptions{Params: map[string]string{"log_level": "WARN"}})

	logger.Log(t.Context(), logmonitor.LevelTrace, "too fine")
	logger.Debug("detail", "component", "client", "alloc_id", "a1")
	logger.Warn("trouble")

	if got := nextLine(t, debugFrames, debugErrs); !strings.HasSuffix(got, "[DEBUG] client: detail: alloc_id=a1") {
		t.Errorf("debug subscriber's first line %q", got)
	}
	if got := nextLine(t, warnFrames, warnErrs); !strings.HasSuffix(got, "[WARN] trouble") {
		t.Errorf("warn subscriber's first line %q", got)
	}
}

// Nomad's Go client reads the stream, in JSON.
func TestAgentMonitorNomadClient(t *testing.T) {
	logger, ts := monitorServer(t, nil)
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	frames, errs := c.Agent().Monitor(stop, &nomadapi.QueryOptions{Params: map[string]string{"log_level": "info", "log_json": "true"}})
	// Like ours, Nomad's client returns once the agent answered.
	logger.Info("hello nomad", "component", "http")
	var f *nomadapi.StreamFrame
	select {
	case f = <-frames:
	case err := <-errs:
		t.Fatal(err)
	}
	var obj map[string]any
	line, _, _ := strings.Cut(string(f.Data), "\n")
	if err := json.Unmarshal([]byte(line), &obj); err != nil {
		t.Fatalf("frame data %q: %v", f.Data, err)
	}
	if obj["@message"] != "hello nomad" || obj["@level"] != "info" || obj["@module"] != "http" {
		t.Fatalf("line %s", line)
	}
}

func TestAgentMonitorBadRequests(t *testing.T) {
	_, ts := monitorServer(t, nil)
	for _, tc := range []struct{ query, want string }{
		{"log_level=loud", "use trace, debug, info, warn or error"},
		{"log_json=maybe", "log_json"},
		{"plain=2x", "plain"},
	} {
		resp, err := http.Get(ts.URL + "/v1/agent/monitor?" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %q", tc.query, resp.StatusCode, body)
		}
	}
	hs := New(nil, &Config{RPC: (&fakeBackend{}).handlers(), Agent: fakeInfo{}, Logger: slog.New(slog.DiscardHandler)})
	noMon := httptest.NewServer(hs.Handler())
	defer noMon.Close()
	resp, err := http.Get(noMon.URL + "/v1/agent/monitor")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented {
		t.Errorf("without a monitor: %d", resp.StatusCode)
	}
}

// A reader that stops reading never holds up the logger: lines it has no
// room for are dropped, and the stream says how many, so that every line
// is either received or counted.
func TestAgentMonitorStalledReader(t *testing.T) {
	logger, ts := monitorServer(t, func(s *Server) {
		s.monitorSet.buffer = 4
		s.monitorSet.write = time.Hour // this reader comes back
	})
	resp, err := http.Get(ts.URL + "/v1/agent/monitor?plain=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	const total = 20000
	pad := strings.Repeat("x", 400)
	// The reader reads nothing meanwhile; this returns only because
	// logging never waits for it.
	for i := range total {
		logger.Info("line", "i", i, "pad", pad)
	}
	var received, dropped int
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for received+dropped < total && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "[INFO] line: i="):
			received++
		case strings.Contains(line, "[WARN] monitor: log lines dropped"):
			_, n, _ := strings.Cut(line, "dropped=")
			d, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("notice %q", line)
			}
			dropped += d
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if received+dropped != total {
		t.Fatalf("received %d and dropped %d of %d lines", received, dropped, total)
	}
	t.Logf("received %d, dropped %d", received, dropped)
}

// The JSON stream is StreamFrame objects whose Data holds whole lines.
func TestAgentMonitorFrames(t *testing.T) {
	logger, ts := monitorServer(t, nil)
	resp, err := http.Get(ts.URL + "/v1/agent/monitor?log_level=error&log_include_location=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	logger.Error("broken")
	var f struct{ Data []byte }
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil {
		t.Fatal(err)
	}
	if got := string(f.Data); !strings.Contains(got, "[ERROR] httpapi/monitor_test.go:") || !strings.HasSuffix(got, ": broken\n") {
		t.Errorf("frame data %q", got)
	}
}

// A reader that stops reading for good is cut off once a write has been
// blocked for the write bound, and one that hangs up is dropped at once:
// either way its subscription ends, and the logger no longer formats
// lines for it.
func TestAgentMonitorReaderGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hangUp bool
	}{{"stalled", false}, {"hung up", true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := logmonitor.New()
			hs := New(nil, &Config{RPC: (&fakeBackend{}).handlers(), Agent: fakeInfo{}, Logger: slog.New(slog.DiscardHandler), Monitor: m})
			hs.monitorSet.write = 50 * time.Millisecond
			closed := make(chan struct{})
			ts := httptest.NewUnstartedServer(hs.Handler())
			ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateClosed {
					close(closed)
				}
			}
			ts.Start()
			defer ts.Close()
			logger := slog.New(m.Handler(slog.DiscardHandler))

			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, "GET /v1/agent/monitor?plain=true HTTP/1.1\r\nHost: agent\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			// The status line: the reader has subscribed. Then it
			// reads no more.
			if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			if tc.hangUp {
				conn.Close()
			}
			pad := strings.Repeat("x", 4000)
			for done := false; !done; {
				logger.Info("line", "pad", pad)
				select {
				case <-closed:
					done = true
				default:
				}
			}
			if logger.Enabled(t.Context(), slog.LevelInfo) {
				t.Fatal("the gone reader is still subscribed")
			}
		})
	}
}
