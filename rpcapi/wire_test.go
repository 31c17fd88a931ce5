package rpcapi

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/structs"
)

// heartbeatHandlers serves NodeUpdateStatus only: "missing" is not found,
// "down" unavailable, any other node succeeds with its secret as an eval ID.
func heartbeatHandlers() *Handlers {
	h := NewHandlers()
	Handle(h, NodeUpdateStatus, func(_ context.Context, req *structs.NodeUpdateStatusRequest) (*structs.NodeUpdateResponse, error) {
		switch req.NodeID {
		case "missing":
			return nil, structs.NotFound("node", req.NodeID)
		case "down":
			return nil, structs.NewError(structs.KindUnavailable, "no leader")
		}
		return &structs.NodeUpdateResponse{HeartbeatTTL: time.Second, EvalIDs: []string{req.SecretID}}, nil
	})
	return h
}

func rpcBody(t *testing.T, v any) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, NewCodec()).Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

func TestHTTPHandler(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(heartbeatHandlers(), nil))
	defer ts.Close()
	base := ts.URL
	hc := ts.Client()

	tests := []struct {
		name     string
		method   string
		path     string
		body     func() *bytes.Reader
		wantCode int
		wantKind string // "" for success
	}{
		{"success", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader {
			return rpcBody(t, &structs.NodeUpdateStatusRequest{NodeID: "n1", SecretID: "s"})
		}, 200, ""},
		{"not found", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader {
			return rpcBody(t, &structs.NodeUpdateStatusRequest{NodeID: "missing"})
		}, 404, "not found"},
		{"unavailable", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader {
			return rpcBody(t, &structs.NodeUpdateStatusRequest{NodeID: "down"})
		}, 503, "unavailable"},
		{"bad body", "POST", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader { return bytes.NewReader([]byte{0xc1}) }, 400, "invalid"},
		{"unknown method", "POST", "/rpc/v1/JobRegister", func() *bytes.Reader { return bytes.NewReader(nil) }, 404, "not found"},
		{"outside the prefix", "POST", "/v1/jobs", func() *bytes.Reader { return bytes.NewReader(nil) }, 404, "not found"},
		{"GET", "GET", "/rpc/v1/NodeUpdateStatus", func() *bytes.Reader { return bytes.NewReader(nil) }, 405, "invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, tc.body())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if ct := resp.Header.Get("Content-Type"); ct != ContentType {
				t.Fatalf("Content-Type = %q", ct)
			}
			if tc.wantKind == "" {
				var out structs.NodeUpdateResponse
				if err := codec.NewDecoder(resp.Body, NewCodec()).Decode(&out); err != nil || out.HeartbeatTTL != time.Second || out.EvalIDs[0] != "s" {
					t.Fatalf("response = %+v, %v", out, err)
				}
				return
			}
			var e ErrorBody
			if err := codec.NewDecoder(resp.Body, NewCodec()).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if e.Kind != tc.wantKind || e.Message == "" {
				t.Fatalf("error = %+v, want kind %q", e, tc.wantKind)
			}
		})
	}
}

// TestHTTPHandlerBoundsNesting: a body nested deeper than any stored value
// may be is refused as invalid, without recursing without bound.
func TestHTTPHandlerBoundsNesting(t *testing.T) {
	h := NewHandlers()
	Handle(h, JobPlan, func(context.Context, *structs.JobPlanRequest) (*structs.JobPlanResponse, error) {
		return &structs.JobPlanResponse{}, nil
	})
	ts := httptest.NewServer(NewHTTPHandler(h, nil))
	defer ts.Close()
	nested := map[string]any{}
	for range maxDecodeDepth + 10 {
		nested = map[string]any{"n": nested}
	}
	job := &structs.Job{ID: "deep", TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{{Name: "t", Config: nested}}}}}
	var buf bytes.Buffer
	enc := NewCodec()
	if err := codec.NewEncoder(&buf, enc).Encode(&structs.JobPlanRequest{Job: job}); err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Post(ts.URL+PathPrefix+JobPlan.Name(), ContentType, &buf)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e ErrorBody
	if err := codec.NewDecoder(resp.Body, NewCodec()).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || e.Kind != structs.KindInvalid.String() {
		t.Fatalf("status %d %+v, want 400 invalid", resp.StatusCode, e)
	}
}
