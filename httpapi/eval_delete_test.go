package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

func TestEvalDeleteRoute(t *testing.T) {
	var got *structs.EvalDeleteRequest
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.EvalDelete, func(_ context.Context, r *structs.EvalDeleteRequest) (*structs.EvalDeleteResponse, error) {
		got = r
		if len(r.EvalIDs) == 1 && r.EvalIDs[0] == "nope" {
			return nil, structs.NewError(structs.KindNotFound, "eval not found: nope")
		}
		return &structs.EvalDeleteResponse{Count: len(r.EvalIDs) + len(r.Filter), WriteMeta: structs.WriteMeta{Index: 12}}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	tests := []struct {
		name, body string
		wantCode   int
		wantBody   string
		wantIDs    string
	}{
		{"by ID, Nomad's body", `{"EvalIDs":["e1","e2"],"Filter":"","Region":"","Namespace":"","SecretID":""}`, 200, `{"Count":2}`, "e1,e2"},
		{"by filter", `{"Filter":"x"}`, 200, `{"Count":1}`, ""},
		{"unknown", `{"EvalIDs":["nope"]}`, 404, "eval not found: nope", "nope"},
		{"unknown field", `{"IDs":["e1"]}`, 400, "unknown field", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			rec := httptest.NewRecorder()
			hs.Handler().ServeHTTP(rec, httptest.NewRequest("DELETE", "/v1/evaluations", strings.NewReader(tt.body)))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.wantCode || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("= %d %s; want %d with %q", rec.Code, body, tt.wantCode, tt.wantBody)
			}
			if got != nil && strings.Join(got.EvalIDs, ",") != tt.wantIDs {
				t.Errorf("server asked to delete %v, want %s", got.EvalIDs, tt.wantIDs)
			}
			if tt.wantCode == 200 && rec.Header().Get("X-Nomad-Index") != "12" {
				t.Errorf("X-Nomad-Index %q", rec.Header().Get("X-Nomad-Index"))
			}
		})
	}
}
