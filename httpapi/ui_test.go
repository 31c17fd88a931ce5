package httpapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServerUI: the listener serves the web UI beside the API when Config.UI
// says so (the agent's ui { enabled }), and only the API otherwise.
func TestServerUI(t *testing.T) {
	noRedirect := &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		ui   bool
		path string
		code int
		has  string
	}{
		{true, "/", http.StatusTemporaryRedirect, ""},
		{true, "/ui/jobs/web", http.StatusOK, "<main"},
		{true, "/v1/status/leader", http.StatusOK, `"`},
		{true, "/v1/nope", http.StatusNotFound, "no such endpoint"},
		{false, "/", http.StatusNotFound, "no such endpoint"},
		{false, "/ui/", http.StatusNotFound, "ui { enabled = true }"},
		{false, "/v1/status/leader", http.StatusOK, `"`},
	}
	for _, ui := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := New(ln, &Config{RPC: (&fakeBackend{}).handlers(), Agent: fakeInfo{}, ParseJob: fakeParse, UI: ui})
		s.Serve()
		base := "http://" + ln.Addr().String()
		for _, tt := range tests {
			if tt.ui != ui {
				continue
			}
			resp, err := noRedirect.Get(base + tt.path)
			if err != nil {
				t.Fatalf("ui=%v GET %s: %v", ui, tt.path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.has) {
				t.Errorf("ui=%v GET %s: %d %.200q, want %d with %q", ui, tt.path, resp.StatusCode, body, tt.code, tt.has)
			}
			if tt.code == http.StatusTemporaryRedirect && resp.Header.Get("Location") != "/ui/" {
				t.Errorf("ui=%v GET %s: Location %q, want /ui/", ui, tt.path, resp.Header.Get("Location"))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		cancel()
	}
}
