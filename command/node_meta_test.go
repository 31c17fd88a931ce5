package command

import (
	"net/http"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

const metaReadAnswer = `{"Meta":{"connect.log_level":"info","foo":"bar","rack-name":"r1"},` +
	`"Dynamic":{"foo":"bar","zone":null},` +
	`"Static":{"connect.log_level":"info","rack-name":"r1","zone":"z1"}}`

func TestNodeMetaApply(t *testing.T) {
	tests := []struct {
		name string
		args []string
		body string // the request sent; "" for a usage error
	}{
		{"set on the local node", []string{"foo=bar", "empty=", "url=http://x/?a=b"},
			`{"NodeID":"","Meta":{"empty":"","foo":"bar","url":"http://x/?a=b"}}`},
		{"set and unset on a node by prefix", []string{"-node-id", "5e6f", "-unset", "zone, old", "foo=bar"},
			`{"NodeID":"` + drainNodeID + `","Meta":{"foo":"bar","old":null,"zone":null}}`},
		{"unset only", []string{"-unset", "zone"}, `{"NodeID":"","Meta":{"zone":null}}`},
		{"nothing", nil, ""},
		{"not key=value", []string{"foo"}, ""},
		{"empty key", []string{"=x"}, ""},
		{"set and unset", []string{"-unset", "foo", "foo=bar"}, ""},
		{"empty unset", []string{"-unset", "a,,b"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newDrainAgent(t)
			f.record("POST /v1/client/metadata", 200, metaReadAnswer)
			r := runCLI(t, f.srv.URL, nil, append([]string{"node", "meta", "apply"}, tt.args...)...)
			if tt.body == "" {
				if r.code == 0 || !strings.Contains(r.stderr, "Usage") {
					t.Fatalf("want a usage error: %+v", r)
				}
				if f.lastBody() != "" {
					t.Fatalf("a request was sent: %s", f.lastBody())
				}
				return
			}
			if r.code != 0 || r.stdout != "" {
				t.Fatalf("%+v", r)
			}
			if got := f.lastBody(); got != tt.body {
				t.Errorf("body = %s\nwant   %s", got, tt.body)
			}
		})
	}
}

func TestNodeMetaApplyRefused(t *testing.T) {
	f := newDrainAgent(t)
	f.record("POST /v1/client/metadata", http.StatusBadRequest, `node metadata key "a b" is invalid: a key is identifiers separated by "."`)
	r := runCLI(t, f.srv.URL, nil, "node", "meta", "apply", "a b=c")
	if r.code == 0 || !strings.Contains(r.stderr, `node metadata key "a b" is invalid`) {
		t.Fatalf("%+v", r)
	}
	g := newOpsAgent(t)
	g.json("GET /v1/nodes", []*api.NodeListStub{})
	if r := runCLI(t, g.srv.URL, nil, "node", "meta", "apply", "-node-id", "ffff", "a=b"); r.code == 0 || !strings.Contains(r.stderr, "No node(s) with prefix") {
		t.Fatalf("unknown node: %+v", r)
	}
}

func TestNodeMetaRead(t *testing.T) {
	f := newDrainAgent(t)
	var query string
	f.mux.HandleFunc("GET /v1/client/metadata", func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		_, _ = w.Write([]byte(metaReadAnswer))
	})
	r := runCLI(t, f.srv.URL, nil, "node", "meta", "read")
	if r.code != 0 || query != "" {
		t.Fatalf("%+v (query %q)", r, query)
	}
	golden(t, "node_meta_read", r.stdout)

	r = runCLI(t, f.srv.URL, nil, "node", "meta", "read", "-node-id", "5e6f", "-json")
	if r.code != 0 || query != "node_id="+drainNodeID || !strings.Contains(r.stdout, `"zone": null`) || !strings.Contains(r.stdout, `"Static": {`) {
		t.Fatalf("-json: %+v (query %q)", r, query)
	}
	if r := runCLI(t, f.srv.URL, nil, "node", "meta", "read", "extra"); r.code == 0 {
		t.Fatalf("an argument: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "node", "meta", "read", "-h"); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "-node-id") {
		t.Fatalf("-h: %+v", r)
	}
}

func TestNodeStatusVerboseShowsMeta(t *testing.T) {
	n, allocs := fixtureNode()
	n.Meta = map[string]string{"rack": "r1", "connect.log_level": "info"}
	out := formatNodeStatus(n, allocs, fixedNow, true)
	if want := "\nMeta\nconnect.log_level = info\nrack              = r1\n"; !strings.Contains(out, want) {
		t.Errorf("node status -verbose lacks\n%s\nin\n%s", want, out)
	}
	if out := formatNodeStatus(n, allocs, fixedNow, false); strings.Contains(out, "\nMeta\n") {
		t.Errorf("node status shows meta without -verbose:\n%s", out)
	}
}
