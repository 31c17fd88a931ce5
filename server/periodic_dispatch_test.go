package server

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

func paramJob(id, payload string, required, optional []string) *structs.Job {
	j := testJob(id, 1, 100, 100)
	j.Type = structs.JobTypeBatch
	j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: payload, MetaRequired: required, MetaOptional: optional}
	return j
}

func TestCheckDispatch(t *testing.T) {
	big := make([]byte, structs.DispatchPayloadSizeLimit+1)
	tests := []struct {
		name    string
		job     *structs.Job
		req     structs.JobDispatchRequest
		wantErr string // "" for none
	}{
		{"optional payload, none given", paramJob("j", "optional", nil, nil), structs.JobDispatchRequest{}, ""},
		{"optional payload given", paramJob("j", "optional", nil, nil), structs.JobDispatchRequest{Payload: []byte("x")}, ""},
		{"required payload missing", paramJob("j", "required", nil, nil), structs.JobDispatchRequest{}, "a payload is required"},
		{"forbidden payload given", paramJob("j", "forbidden", nil, nil), structs.JobDispatchRequest{Payload: []byte("x")}, "a payload is forbidden"},
		{"payload over the limit", paramJob("j", "optional", nil, nil), structs.JobDispatchRequest{Payload: big}, "payload is 16385 bytes: at most 16384"},
		{"payload at the limit", paramJob("j", "optional", nil, nil), structs.JobDispatchRequest{Payload: big[:structs.DispatchPayloadSizeLimit]}, ""},
		{"required meta given, optional left out", paramJob("j", "optional", []string{"a"}, []string{"b"}),
			structs.JobDispatchRequest{Meta: map[string]string{"a": "1"}}, ""},
		{"required meta missing", paramJob("j", "optional", []string{"a", "c"}, nil),
			structs.JobDispatchRequest{Meta: map[string]string{"a": "1"}}, "missing required meta: c"},
		{"unknown meta key refused", paramJob("j", "optional", []string{"a"}, []string{"b"}),
			structs.JobDispatchRequest{Meta: map[string]string{"a": "1", "z": "2", "y": "3"}}, "not declared by the job's meta_required or meta_optional: y, z"},
		{"priority out of range", paramJob("j", "optional", nil, nil), structs.JobDispatchRequest{Priority: 101}, "priority 101 is out of range"},
		{"not parameterized", testJob("j", 1, 100, 100), structs.JobDispatchRequest{}, "is not parameterized"},
		{"stopped", func() *structs.Job { j := paramJob("j", "", nil, nil); j.Stop = true; return j }(), structs.JobDispatchRequest{}, "is stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.job.Canonicalize()
			err := checkDispatch(tt.job, &tt.req)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			case err != nil && structs.KindOf(err) != structs.KindInvalid:
				t.Fatalf("error kind = %v, want invalid", structs.KindOf(err))
			}
		})
	}
}

func TestJobDispatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerNode(t, s, testNode("node-1", 4000, 4096))
		job := paramJob("transcode", "required", []string{"input"}, []string{"profile"})
		job.Meta = map[string]string{"team": "media", "profile": "default"}
		job.TaskGroups[0].Tasks[0].DispatchPayload = &structs.DispatchPayloadConfig{File: "in.json"}
		if r := registerJob(t, s, job); r.EvalID != "" {
			t.Fatalf("a parameterized job got an evaluation: %+v", r)
		}
		ctx := context.Background()
		req := &structs.JobDispatchRequest{JobID: "transcode", Payload: []byte(`{"f": 1}`),
			Meta: map[string]string{"input": "a.mp4", "profile": "hd"}, IdempotencyToken: "tok-1"}
		resp, err := s.JobDispatch(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := regexp.MatchString(`^transcode/dispatch-\d+-[0-9a-f]{8}$`, resp.DispatchedJobID); !ok {
			t.Errorf("child ID %q is not <job>/dispatch-<unix>-<8 hex>", resp.DispatchedJobID)
		}
		if resp.EvalID == "" || resp.EvalCreateIndex == 0 || resp.JobCreateIndex == 0 || resp.Index == 0 {
			t.Errorf("response = %+v", resp)
		}
		child, err := s.State().JobByID(nil, structs.DefaultNamespace, resp.DispatchedJobID)
		if err != nil || child == nil {
			t.Fatalf("child: %v %v", child, err)
		}
		if !child.Dispatched || child.ParentID != "transcode" || string(child.Payload) != `{"f": 1}` ||
			child.Meta["team"] != "media" || child.Meta["profile"] != "hd" || child.Meta["input"] != "a.mp4" ||
			child.DispatchIdempotencyToken != "tok-1" {
			t.Errorf("child = %+v", child)
		}
		waitEvalStatus(t, s, resp.EvalID, structs.EvalStatusComplete)
		if n := len(allocsOf(t, s, child.ID, structs.AllocDesiredStatusRun)); n != 1 {
			t.Errorf("child has %d allocations, want 1", n)
		}

		again, err := s.JobDispatch(ctx, req)
		if err != nil || again.DispatchedJobID != resp.DispatchedJobID || again.EvalID != "" {
			t.Errorf("same idempotency token: %+v %v, want the first child %s and no new evaluation", again, err, resp.DispatchedJobID)
		}

		tmpl, err := s.JobDispatch(ctx, &structs.JobDispatchRequest{JobID: "transcode", Payload: []byte("x"),
			Meta: map[string]string{"input": "b"}, IDPrefixTemplate: "nightly"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tmpl.DispatchedJobID, "transcode/dispatch-nightly-") {
			t.Errorf("child ID with a prefix template = %q", tmpl.DispatchedJobID)
		}

		_, err = s.JobDispatch(ctx, &structs.JobDispatchRequest{JobID: "transcode", Meta: map[string]string{"input": "b"}})
		if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "payload is required") {
			t.Errorf("dispatch without the required payload: %v", err)
		}
		if _, err := s.JobDispatch(ctx, &structs.JobDispatchRequest{JobID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("dispatch of a missing job: %v", err)
		}
		parent, _ := s.State().JobByID(nil, structs.DefaultNamespace, "transcode")
		if parent.Status != structs.JobStatusRunning {
			t.Errorf("parent status = %q, want running", parent.Status)
		}
	})
}

// TestJobDispatchConcurrentIdempotencyToken: dispatches with one token
// that race past the endpoint's lookup still register one child: the FSM
// refuses the second, whose caller is answered the first child.
func TestJobDispatchConcurrentIdempotencyToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		registerJob(t, s, paramJob("p", "optional", nil, nil))
		const n = 6
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.JobDispatch(context.Background(), &structs.JobDispatchRequest{JobID: "p", IdempotencyToken: "race"})
				errs[i] = err
				if r != nil {
					ids[i] = r.DispatchedJobID
				}
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || ids[i] == "" || ids[i] != ids[0] {
				t.Fatalf("dispatch %d = %q, %v; want every one to answer %q", i, ids[i], errs[i], ids[0])
			}
		}
		children, err := s.State().JobsByIDPrefix(nil, structs.DefaultNamespace, "p/dispatch-")
		if err != nil || len(children) != 1 {
			t.Fatalf("%d children registered (%v), want 1", len(children), err)
		}
	})
}
