package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TestKeyringWriteBodies: the keyring's writes answer Nomad's bodies, the
// write's index in the body and in X-Nomad-Index, and the rotated key's
// own indexes as the server gave them (0, as Nomad's).
func TestKeyringWriteBodies(t *testing.T) {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.KeyringRotate, func(context.Context, *structs.KeyringRotateRequest) (*structs.KeyringRotateResponse, error) {
		return &structs.KeyringRotateResponse{
			Key:       &structs.RootKeyMeta{KeyID: "k2", Algorithm: structs.AlgorithmAES256GCM, State: structs.RootKeyStateActive, CreateTime: 42},
			WriteMeta: structs.WriteMeta{Index: 8},
		}, nil
	})
	rpcapi.Handle(h, rpcapi.KeyringDelete, func(_ context.Context, req *structs.KeyringDeleteRequest) (*structs.KeyringDeleteResponse, error) {
		if req.KeyID != "k1" || !req.Force {
			t.Errorf("delete request %+v, want k1 with force", req)
		}
		return &structs.KeyringDeleteResponse{WriteMeta: structs.WriteMeta{Index: 9}}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	for _, tc := range []struct {
		method, path string
		index        string
		body         string
	}{
		{"PUT", "/v1/operator/keyring/rotate", "8",
			`{"Index":8,"Key":{"Algorithm":"aes256-gcm","CreateIndex":0,"CreateTime":42,"KeyID":"k2","ModifyIndex":0,"PublishTime":0,"State":"active"}}`},
		{"DELETE", "/v1/operator/keyring/key/k1?force=true", "9", `{"Index":9}`},
	} {
		t.Run(tc.method, func(t *testing.T) {
			rec := httptest.NewRecorder()
			hs.Handler().ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != 200 {
				t.Fatalf("%s %s = %d %s", tc.method, tc.path, rec.Code, rec.Body)
			}
			if got := rec.Header().Get("X-Nomad-Index"); got != tc.index {
				t.Errorf("X-Nomad-Index %q, want %q", got, tc.index)
			}
			var got, want any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if err := json.Unmarshal([]byte(tc.body), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body %s\nwant %s", rec.Body, tc.body)
			}
		})
	}
}
