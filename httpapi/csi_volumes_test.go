package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-io/drover/rpcapi"
)

// TestCSIVolumeRoutes: with no CSI plugin, the CSI volume list is empty
// (Nomad's TestCSIVolumes_CRUD lists it), a volume is not found, and a
// write is refused saying what to use instead; a list without a type, or
// of host volumes, says what to do.
func TestCSIVolumeRoutes(t *testing.T) {
	hs := New(nil, &Config{RPC: rpcapi.NewHandlers(), Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	tests := []struct {
		method, path string
		code         int
		want         string
	}{
		{"GET", "/v1/volumes?type=csi", 200, "[]"},
		{"GET", "/v1/volumes", 400, "use ?type=csi"},
		{"GET", "/v1/volumes?type=host", 400, "node status -verbose"},
		{"GET", "/v1/volumes?type=nfs", 400, `unknown volume type "nfs"`},
		{"GET", "/v1/volume/csi/vol1", 404, `CSI volume "vol1" not found`},
		{"PUT", "/v1/volume/csi/vol1", 400, "runs no CSI plugins"},
		{"DELETE", "/v1/volume/csi/vol1", 400, "host volume"},
	}
	for _, tc := range tests {
		req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %s = %d %q, want %d with %q", tc.method, tc.path, resp.StatusCode, b, tc.code, tc.want)
		}
	}
}
