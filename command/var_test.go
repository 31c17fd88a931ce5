package command

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

func TestParseVarSpecHCL(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      *api.Variable
		err       string
	}{
		{"full", "path = \"a/b\"\nnamespace = \"prod\"\nitems {\n  k1 = \"v1\"\n  k2 = \"v2\"\n}\n",
			&api.Variable{Path: "a/b", Namespace: "prod", Items: map[string]string{"k1": "v1", "k2": "v2"}}, ""},
		{"items only", "items {\n  k = \"v\"\n}\n", &api.Variable{Items: map[string]string{"k": "v"}}, ""},
		{"number item", "items {\n  k = 1\n}\n", nil, "must be a string"},
		{"unknown key", "paths = \"x\"\n", nil, "paths"},
		{"not HCL", "items {", nil, "spec.hcl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVarSpecHCL("spec.hcl", []byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != tc.want.Path || got.Namespace != tc.want.Namespace || len(got.Items) != len(tc.want.Items) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for k, v := range tc.want.Items {
				if got.Items[k] != v {
					t.Fatalf("item %s = %q, want %q", k, got.Items[k], v)
				}
			}
		})
	}
}

// TestVarPutSendsItemsAndCAS: items from arguments and stdin, -check-index
// as ?cas=, and a 409 rendered as what to do.
func TestVarPutSendsItemsAndCAS(t *testing.T) {
	f := newFakeAgent(t)
	var (
		mu    sync.Mutex
		bodys []api.Variable
		query []string
	)
	f.mux.HandleFunc("/v1/var/app/db", func(w http.ResponseWriter, r *http.Request) {
		var v api.Variable
		_ = json.NewDecoder(r.Body).Decode(&v)
		mu.Lock()
		bodys = append(bodys, v)
		query = append(query, r.URL.RawQuery)
		mu.Unlock()
		if r.URL.Query().Get("cas") == "3" {
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(&api.Variable{Path: "app/db", ModifyIndex: 9})
			return
		}
		v.Path, v.ModifyIndex = "app/db", 10
		_ = json.NewEncoder(w).Encode(&v)
	})
	var stdout, stderr bytes.Buffer
	d := deps{now: func() time.Time { return fixedNow }, readFile: func(string) ([]byte, error) { return nil, io.EOF },
		getenv: func(k string) string {
			if k == "DROVER_ADDR" {
				return f.srv.URL
			}
			return ""
		},
		stdin: strings.NewReader("from-stdin\n"),
	}
	if code := run([]string{"var", "put", "app/db", "user=admin", "pw=-"}, newMeta(&stdout, &stderr, d)); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `Wrote variable "app/db" with modify index 10`) {
		t.Errorf("stdout %q", stdout.String())
	}
	r := runCLI(t, f.srv.URL, nil, "var", "put", "-check-index", "3", "app/db", "user=x")
	if r.code != 1 || !strings.Contains(r.stderr, "check-and-set on modify index 3 failed: its modify index is 9") {
		t.Errorf("CAS conflict: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodys) != 2 || bodys[0].Items["user"] != "admin" || bodys[0].Items["pw"] != "from-stdin" || query[0] != "" || query[1] != "cas=3" {
		t.Fatalf("sent %+v with queries %q", bodys, query)
	}
	if r := runCLI(t, f.srv.URL, nil, "var", "put", "app/db"); r.code != 1 || !strings.Contains(r.stderr, "no items") {
		t.Errorf("put without items: %+v", r)
	}
}
