package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// metaCall sends a request to the API and returns its status and body.
func metaCall(t *testing.T, method, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestNodeMetaReadAndApply(t *testing.T) {
	nc := &fakeNodeClient{}
	ts, _, _ := newOpsServer(t, nc, true)

	code, body := metaCall(t, "GET", ts.URL+"/v1/client/metadata", "", nil)
	var got api.NodeMetaResponse
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("GET = %d %s", code, body)
	}
	if !reflect.DeepEqual(got.Meta, fakeStaticMeta()) || !reflect.DeepEqual(got.Static, fakeStaticMeta()) || len(got.Dynamic) != 0 {
		t.Fatalf("GET = %+v", got)
	}

	for _, method := range []string{"POST", "PUT"} {
		code, body = metaCall(t, method, ts.URL+"/v1/client/metadata", `{"NodeID": "`+testNodeID+`", "Meta": {"foo": "bar", "rack": null}}`, nil)
		got = api.NodeMetaResponse{}
		if code != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("%s = %d %s", method, code, body)
		}
		if got.Meta["foo"] != "bar" || got.Meta["rack"] != "" || got.Dynamic["foo"] == nil || *got.Dynamic["foo"] != "bar" {
			t.Fatalf("%s = %+v", method, got)
		}
		// A null is kept in Dynamic (it hides the static key), as JSON null.
		if v, ok := got.Dynamic["rack"]; !ok || v != nil || !strings.Contains(body, `"rack":null`) {
			t.Fatalf("%s: Dynamic[rack] = %v, %v in %s", method, v, ok, body)
		}
	}
	// No NodeID: this agent's node.
	if code, body = metaCall(t, "POST", ts.URL+"/v1/client/metadata", `{"Meta": {"a.b-c": "1"}}`, nil); code != 200 || !strings.Contains(body, `"a.b-c":"1"`) {
		t.Fatalf("POST without NodeID = %d %s", code, body)
	}
	if code, body = metaCall(t, "GET", ts.URL+"/v1/client/metadata?node_id="+testNodeID, "", nil); code != 200 || !strings.Contains(body, `"foo":"bar"`) {
		t.Fatalf("GET after apply = %d %s", code, body)
	}
	// Only unsets: what `nomad node meta apply -unset foo` sends.
	if code, body = metaCall(t, "POST", ts.URL+"/v1/client/metadata", `{"NodeID":"","Meta":{"foo":null}}`, nil); code != 200 || !strings.Contains(body, `"foo":null`) {
		t.Fatalf("POST of unsets only = %d %s", code, body)
	}
}

func TestNodeMetaApplyBadInput(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"empty body", ``, "request body is empty"},
		{"array body", `["foo"]`, "request body must be a JSON object"},
		{"string body", `"foo=bar"`, "request body must be a JSON object"},
		{"not JSON", `{"Meta": x}`, "invalid character"},
		{"truncated", `{"Meta": {"a": "b"`, "unexpected EOF"},
		{"unknown field", `{"Metas": {"a": "b"}}`, "unknown field Metas"},
		{"no Meta", `{"NodeID": ""}`, "missing required Meta object"},
		{"empty Meta", `{"Meta": {}}`, "missing required Meta object"},
		{"Meta not an object", `{"Meta": ["a"]}`, "Meta must be an object"},
		{"number value", `{"Meta": {"a": 1}}`, "each value must be a string, or null"},
		{"key with a space", `{"Meta": {"bad key": "x"}}`, `node metadata key "bad key" is invalid`},
		{"key with interpolation", `{"Meta": {"${attr.x}": "x"}}`, `node metadata key "${attr.x}" is invalid`},
		{"empty key", `{"Meta": {"": "x"}}`, "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc := &fakeNodeClient{}
			ts, _, _ := newOpsServer(t, nc, true)
			code, body := metaCall(t, "POST", ts.URL+"/v1/client/metadata", tt.body, nil)
			if code != 400 || !strings.Contains(body, tt.want) {
				t.Fatalf("POST %s = %d %q, want 400 with %q", tt.body, code, body, tt.want)
			}
			if calls := nc.recorded(); len(calls) != 0 {
				t.Fatalf("the client was asked %v", calls)
			}
		})
	}
}

func TestNodeMetaForwarding(t *testing.T) {
	tests := []struct {
		name      string
		noClient  bool
		method    string
		path      string
		header    string
		body      string
		wantCode  int
		wantBody  string
		wantURI   string // what the other agent saw; "" when nothing is forwarded
		wantBy    string
		wantLocal bool // served by this agent's client
	}{
		{name: "read another node", method: "GET", path: "/v1/client/metadata?node_id=" + otherNodeID,
			wantCode: 200, wantBody: `{"from":"other"}`, wantURI: "/v1/client/metadata?node_id=" + otherNodeID, wantBy: testNodeID},
		{name: "apply to another node by body NodeID", method: "POST", path: "/v1/client/metadata", body: `{"NodeID": "node-0002", "Meta": {"a": "b"}}`,
			wantCode: 200, wantBody: `{"from":"other"}`, wantURI: "/v1/client/metadata", wantBy: testNodeID},
		{name: "apply to another node by node_id", method: "PUT", path: "/v1/client/metadata?node_id=node-0002", body: `{"Meta": {"a": "b"}}`,
			wantCode: 200, wantURI: "/v1/client/metadata?node_id=node-0002", wantBy: testNodeID},
		{name: "server-only agent forwards an apply", noClient: true, method: "POST", path: "/v1/client/metadata", body: `{"NodeID": "` + otherNodeID + `", "Meta": {"a": null}}`,
			wantCode: 200, wantURI: "/v1/client/metadata", wantBy: "server"},
		{name: "apply to this node by prefix", method: "POST", path: "/v1/client/metadata", body: `{"NodeID": "node-0001", "Meta": {"a": "b"}}`,
			wantCode: 200, wantBody: `"a":"b"`, wantLocal: true},
		{name: "unknown node", method: "POST", path: "/v1/client/metadata", body: `{"NodeID": "node-9", "Meta": {"a": "b"}}`,
			wantCode: 404, wantBody: `node "node-9" not found`},
		{name: "server-only agent without NodeID", noClient: true, method: "POST", path: "/v1/client/metadata", body: `{"Meta": {"a": "b"}}`,
			wantCode: 400, wantBody: "this agent runs no client"},
		{name: "server-only agent read without node_id", noClient: true, method: "GET", path: "/v1/client/metadata",
			wantCode: 400, wantBody: "this agent runs no client"},
		{name: "a forwarded apply for another node is not forwarded again", method: "POST", path: "/v1/client/metadata", header: "node-9",
			body: `{"NodeID": "` + otherNodeID + `", "Meta": {"a": "b"}}`, wantCode: 400, wantBody: "send the request to the agent of node"},
		{name: "bad body on the way is refused by this agent", method: "POST", path: "/v1/client/metadata", body: `[1]`,
			wantCode: 400, wantBody: "must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, other := newForwardingServer(t, !tt.noClient)
			h := map[string]string{}
			if tt.header != "" {
				h[forwardedHeader] = tt.header
			}
			code, body := metaCall(t, tt.method, ts.URL+tt.path, tt.body, h)
			if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
				t.Errorf("%s %s = %d %q, want %d with %q", tt.method, tt.path, code, body, tt.wantCode, tt.wantBody)
			}
			seen := other.last()
			if seen.uri != tt.wantURI || seen.by != tt.wantBy {
				t.Errorf("the other agent saw %+v, want URI %q by %q", seen, tt.wantURI, tt.wantBy)
			}
			if tt.wantURI != "" && (seen.method != tt.method || seen.body != tt.body) {
				t.Errorf("the other agent saw %s %q, want %s %q (the body as sent)", seen.method, seen.body, tt.method, tt.body)
			}
		})
	}
}
