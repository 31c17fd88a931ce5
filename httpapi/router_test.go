package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestRoutes checks how paths reach handlers: wildcards are unescaped path
// segments (a job ID holding "/" arrives escaped), a trailing slash is
// ignored, and a path no route takes is a 404 or, when the path is known, a
// 405 naming its methods.
func TestRoutes(t *testing.T) {
	jobs := []*structs.Job{{ID: "a/b", Namespace: "default"}, {ID: "web", Namespace: "default"}}
	tests := []struct {
		method, path string
		wantCode     int
		wantBody     string
		wantAllow    string
	}{
		{"GET", "/v1/job/a%2Fb", 200, `"ID":"a/b"`, ""},
		{"GET", "/v1/job/a%2Fb/allocations", 200, `"ID":"a1"`, ""},
		{"GET", "/v1/job/a%2fb", 200, `"ID":"a/b"`, ""},
		{"GET", "/v1/job/a/b", 404, "no such endpoint: GET /v1/job/a/b", ""},
		{"GET", "/v1/jobs/", 200, `"ID":"web"`, ""},
		{"GET", "/v1/job/web/", 200, `"ID":"web"`, ""},
		{"GET", "/v1/job/", 404, "no such endpoint", ""},
		{"PATCH", "/v1/job/web", 405, "method PATCH is not allowed on /v1/job/web: use DELETE, GET, POST, PUT", "DELETE, GET, POST, PUT"},
		{"GET", "/v1/job/web/plan", 405, "use POST, PUT", "POST, PUT"},
		{"GET", "/v1/client/allocation/x/nope", 404, "no such endpoint", ""},
	}
	ts := newFakeServer(t, &fakeBackend{jobs: jobs})
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, ts.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantCode || !strings.Contains(string(body), tt.wantBody) {
				t.Errorf("%d %q, want %d with %q", resp.StatusCode, body, tt.wantCode, tt.wantBody)
			}
			if got := resp.Header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
		})
	}
}
