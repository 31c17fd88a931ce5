package rpcclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// connKiller serves a real server's methods, except that the first call of
// one method is served (the server applies it) and then its connection is
// closed before the reply is written, as when a network fails or a proxy
// times out at the worst moment.
type connKiller struct {
	next   http.Handler
	method string
	killed atomic.Int32
}

func (k *connKiller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != rpcapi.PathPrefix+k.method || !k.killed.CompareAndSwap(0, 1) {
		k.next.ServeHTTP(w, r)
		return
	}
	k.next.ServeHTTP(httptest.NewRecorder(), r) // applied; the reply is dropped
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	_ = conn.Close()
}

// TestRetriedWriteAppliedOnce: a job registration whose connection dies
// after the server applied it and before the reply is retried by the
// client, and the retry does not apply it again: the caller gets the first
// reply (its evaluation), the job has one evaluation and its version is 0,
// and a registration that enforces "the job must not exist" succeeds.
func TestRetriedWriteAppliedOnce(t *testing.T) {
	srv, err := server.NewServer(context.Background(), &server.Config{NodeName: "retry"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Shutdown(); err != nil {
			t.Error(err)
		}
	})
	tests := []struct {
		name string
		job  string
		// before runs before the write: the job's state it finds.
		before  func(t *testing.T)
		enforce bool
	}{
		{name: "a new job, enforcing that it does not exist", job: "web", enforce: true},
		{name: "an unchanged job", job: "api", before: func(t *testing.T) {
			if _, err := srv.JobRegister(context.Background(), &structs.JobRegisterRequest{Job: retryJob("api")}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before(t)
			}
			evalsBefore := evalIDs(t, srv, tt.job)
			killer := &connKiller{next: rpcapi.NewHTTPHandler(srv.Handlers(), nil), method: rpcapi.JobRegister.Name()}
			ts := httptest.NewServer(killer)
			t.Cleanup(ts.Close)
			c, err := rpcclient.New(&rpcclient.Config{Servers: []string{strings.TrimPrefix(ts.URL, "http://")},
				RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond, Rounds: 3})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)

			resp, err := rpcapi.JobRegister.Call(context.Background(), c, &structs.JobRegisterRequest{Job: retryJob(tt.job), EnforceIndex: tt.enforce})
			if err != nil {
				t.Fatalf("JobRegister: %v", err)
			}
			if killer.killed.Load() != 1 {
				t.Fatal("the connection was not killed: the test proves nothing")
			}
			after := evalIDs(t, srv, tt.job)
			if len(after) != len(evalsBefore)+1 {
				t.Fatalf("the job has %d evaluations after one registration (had %d): the retry was applied again", len(after), len(evalsBefore))
			}
			if !after[resp.EvalID] {
				t.Errorf("the reply's evaluation %s is not the job's new one %v", resp.EvalID, after)
			}
			job, err := srv.JobGet(context.Background(), &structs.JobSpecificRequest{JobID: tt.job})
			if err != nil {
				t.Fatal(err)
			}
			if job.Job.Version != 0 || resp.JobModifyIndex != job.Job.JobModifyIndex {
				t.Errorf("job version %d, JobModifyIndex %d (reply %d): want version 0 and the reply's index",
					job.Job.Version, job.Job.JobModifyIndex, resp.JobModifyIndex)
			}
		})
	}
}

func retryJob(id string) *structs.Job {
	return &structs.Job{ID: id, Datacenters: []string{"dc1"}, TaskGroups: []*structs.TaskGroup{{
		Name: "g", Count: 0, Tasks: []*structs.Task{{Name: "t", Driver: "mock_driver"}},
	}}}
}

func evalIDs(t *testing.T, srv *server.Server, jobID string) map[string]bool {
	t.Helper()
	resp, err := srv.JobEvaluations(context.Background(), &structs.JobSpecificRequest{JobID: jobID})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range resp.Evaluations {
		out[e.ID] = true
	}
	return out
}
