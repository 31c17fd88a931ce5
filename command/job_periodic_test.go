package command

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

func TestGoldenTemplateJobStatus(t *testing.T) {
	periodic := &api.Job{ID: api.String("report"), Name: api.String("report"), Type: api.String("batch"),
		Priority: api.Int(50), Datacenters: []string{"dc1"}, Namespace: api.String("default"), Status: api.String("running"),
		SubmitTime: ptrTo(fixedNow.Add(-time.Hour).UnixNano()),
		Periodic:   &api.PeriodicConfig{Spec: api.String("*/15 * * * *"), TimeZone: api.String("UTC")}}
	children := []*api.JobListStub{
		{ID: "report/periodic-1767538800", ParentID: "report", Status: "running"},
		{ID: "report/periodic-1767537900", ParentID: "report", Status: "dead"},
	}
	golden(t, "job_status_periodic", formatJobStatus(jobStatus{Job: periodic, Children: children, Template: true}, fixedNow.Add(-5*time.Minute), false))

	param := &api.Job{ID: api.String("transcode"), Name: api.String("transcode"), Type: api.String("sysbatch"),
		Priority: api.Int(50), Datacenters: []string{"dc1"}, Namespace: api.String("default"), Status: api.String("running"),
		SubmitTime:       ptrTo(fixedNow.Add(-time.Hour).UnixNano()),
		ParameterizedJob: &api.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"input"}, MetaOptional: []string{"profile", "tier"}}}
	golden(t, "job_status_parameterized", formatJobStatus(jobStatus{Job: param, Template: true}, fixedNow, false))
}

func TestNextPeriodicLaunch(t *testing.T) {
	now := time.Date(2026, 1, 4, 15, 7, 0, 0, time.UTC)
	tests := []struct {
		p    *api.PeriodicConfig
		want time.Time
	}{
		{&api.PeriodicConfig{Spec: api.String("*/15 * * * *")}, time.Date(2026, 1, 4, 15, 15, 0, 0, time.UTC)},
		{&api.PeriodicConfig{Specs: []string{"0 18 * * *", "30 15 * * *"}}, time.Date(2026, 1, 4, 15, 30, 0, 0, time.UTC)},
		// 17:00 in Berlin (UTC+1 in January) is 16:00 UTC.
		{&api.PeriodicConfig{Spec: api.String("0 17 * * *"), TimeZone: api.String("Europe/Berlin")}, time.Date(2026, 1, 4, 16, 0, 0, 0, time.UTC)},
		{&api.PeriodicConfig{Spec: api.String("not a cron")}, time.Time{}},
	}
	for _, tt := range tests {
		if got := nextPeriodicLaunch(tt.p, now); !got.Equal(tt.want) {
			t.Errorf("next of %+v = %s, want %s", tt.p, got, tt.want)
		}
	}
}

func TestJobDispatchCommand(t *testing.T) {
	f := newFakeAgent(t)
	var got api.JobDispatchRequest
	f.mux.HandleFunc("POST /v1/job/transcode/dispatch", func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		_ = json.NewEncoder(w).Encode(api.JobDispatchResponse{DispatchedJobID: "transcode/dispatch-1-abcdef01", EvalID: "0123456789abcdef"})
	})
	f.mux.HandleFunc("POST /v1/job/nope/dispatch", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`dispatch job "nope": missing required meta: input`))
	})
	f.mux.HandleFunc("POST /v1/job/report/periodic/force", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(api.PeriodicForceResponse{EvalID: "e-forced"})
	})
	file := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(file, []byte(`{"n":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, f.srv.URL, nil, "job", "dispatch", "-detach", "-meta", "input=a.mp4", "-meta", "profile=hd",
		"-id-prefix-template", "nightly", "-idempotency-token", "tok", "transcode", file)
	if r.code != 0 || !strings.Contains(r.stdout, "Dispatched Job ID = transcode/dispatch-1-abcdef01") {
		t.Fatalf("dispatch = %d %q %q", r.code, r.stdout, r.stderr)
	}
	if string(got.Payload) != `{"n":1}` || got.Meta["input"] != "a.mp4" || got.Meta["profile"] != "hd" ||
		got.IdPrefixTemplate != "nightly" || got.IdempotencyToken != "tok" || got.JobID != "transcode" {
		t.Errorf("request = %+v", got)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "dispatch", "nope"); r.code != 1 || !strings.Contains(r.stderr, "missing required meta: input") {
		t.Errorf("refused dispatch = %d %q", r.code, r.stderr)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "dispatch", "-meta", "novalue", "transcode"); r.code == 0 || !strings.Contains(r.stderr, "is not key=value") {
		t.Errorf("bad -meta = %d %q", r.code, r.stderr)
	}
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, make([]byte, 16*1024+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "dispatch", "transcode", big); r.code != 1 || !strings.Contains(r.stderr, "limited to 16 KiB") {
		t.Errorf("payload over the limit = %d %q", r.code, r.stderr)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "periodic", "force", "-detach", "report"); r.code != 0 || !strings.Contains(r.stdout, "e-forced") {
		t.Errorf("periodic force = %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func ptrTo[T any](v T) *T { return &v }
