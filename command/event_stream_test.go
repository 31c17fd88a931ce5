package command

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEventStreamCommand: the topics and index go to the agent as
// repeated topic= and index=; the event lines are printed as they come,
// heartbeats are not; a stream the agent ends is an error saying how to
// resume; a bad topic is the agent's 400.
func TestEventStreamCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/event/stream" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if q["topic"][0] == "Bogus" {
			http.Error(w, `topic="Bogus": unknown topic`, http.StatusBadRequest)
			return
		}
		if got := strings.Join(q["topic"], ","); got != "Job:web,Allocation" || q.Get("index") != "7" {
			t.Errorf("query = %v", q)
		}
		fmt.Fprint(w, `{"Index":7,"Events":[{"Topic":"Job","Type":"JobRegistered","Key":"web","Index":7}]}`+"\n{}\n"+
			`{"Index":8,"Events":[{"Topic":"Allocation","Type":"PlanResult","Key":"a1","Index":8}]}`+"\n")
	}))
	defer srv.Close()

	r := runCLI(t, srv.URL, nil, "event", "stream", "-topic", "Job:web", "-topic", "Allocation", "-index", "7")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"JobRegistered"`) || !strings.Contains(lines[1], `"PlanResult"`) {
		t.Errorf("stdout = %q", r.stdout)
	}
	if r.code != exitError || !strings.Contains(r.stderr, "resume with -index") {
		t.Errorf("a stream the agent ended: exit %d, stderr %q", r.code, r.stderr)
	}

	r = runCLI(t, srv.URL, nil, "event", "stream", "-topic", "Bogus")
	if r.code != exitError || !strings.Contains(r.stderr, "unknown topic") {
		t.Errorf("bad topic: exit %d, stderr %q", r.code, r.stderr)
	}
}
