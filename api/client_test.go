package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// recorded is one request the fake agent saw.
type recorded struct {
	method, path, query, body string
}

// fakeAgent answers every request with status and body, recording it.
func fakeAgent(t *testing.T, status int, body string, hdr map[string]string) (*Client, *recorded) {
	t.Helper()
	rec := &recorded{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*rec = recorded{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, body: string(b)}
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func TestEndpoints(t *testing.T) {
	cases := []struct {
		name      string
		body      string
		call      func(c *Client) (any, error)
		method    string
		path      string
		query     string
		reqBody   string
		checkResp func(t *testing.T, got any)
	}{
		{
			name: "jobs list",
			body: `[{"ID":"b"},{"ID":"a","JobSummary":{"Summary":{"web":{"Running":2}}}}]`,
			call: func(c *Client) (any, error) {
				l, _, err := c.Jobs().List(&QueryOptions{Prefix: "a"})
				return l, err
			},
			method: "GET", path: "/v1/jobs", query: "prefix=a",
			checkResp: func(t *testing.T, got any) {
				l := got.([]*JobListStub)
				if len(l) != 2 || l[0].ID != "a" || l[0].JobSummary.Summary["web"].Running != 2 {
					t.Errorf("got %+v", l)
				}
			},
		},
		{
			name: "job register",
			body: `{"EvalID":"e1","JobModifyIndex":7}`,
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Register(&Job{ID: String("hello")}, nil)
				return r, err
			},
			method: "PUT", path: "/v1/jobs", reqBody: `"ID":"hello"`,
			checkResp: func(t *testing.T, got any) {
				if r := got.(*JobRegisterResponse); r.EvalID != "e1" || r.JobModifyIndex != 7 {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "job info escapes the ID",
			body: `{"ID":"a b","Type":"batch"}`,
			call: func(c *Client) (any, error) {
				j, _, err := c.Jobs().Info("a b", nil)
				return j, err
			},
			method: "GET", path: "/v1/job/a b",
			checkResp: func(t *testing.T, got any) {
				if j := got.(*Job); *j.Type != "batch" {
					t.Errorf("got %+v", j)
				}
			},
		},
		{
			name: "job allocations",
			body: `[{"ID":"x","CreateIndex":9},{"ID":"y","CreateIndex":3,"TaskStates":{"t":{"State":"running","Events":[{"Type":"Started","Time":5}]}}}]`,
			call: func(c *Client) (any, error) {
				l, _, err := c.Jobs().Allocations("web", true, nil)
				return l, err
			},
			method: "GET", path: "/v1/job/web/allocations", query: "all=true",
			checkResp: func(t *testing.T, got any) {
				l := got.([]*AllocationListStub)
				if l[0].ID != "y" || l[0].TaskStates["t"].Events[0].Time != 5 {
					t.Errorf("not sorted oldest first or events lost: %+v", l[0])
				}
			},
		},
		{
			name: "job evaluations newest first",
			body: `[{"ID":"old","CreateIndex":1},{"ID":"new","CreateIndex":5,"FailedTGAllocs":{"web":{"NodesExhausted":1,"DimensionExhausted":{"memory":1}}}}]`,
			call: func(c *Client) (any, error) {
				l, _, err := c.Jobs().Evaluations("web", nil)
				return l, err
			},
			method: "GET", path: "/v1/job/web/evaluations",
			checkResp: func(t *testing.T, got any) {
				l := got.([]*Evaluation)
				if l[0].ID != "new" || l[0].FailedTGAllocs["web"].DimensionExhausted["memory"] != 1 {
					t.Errorf("got %+v", l[0])
				}
			},
		},
		{
			name: "job summary",
			body: `{"JobID":"web","Summary":{"g":{"Failed":1}}}`,
			call: func(c *Client) (any, error) {
				s, _, err := c.Jobs().Summary("web", nil)
				return s, err
			},
			method: "GET", path: "/v1/job/web/summary",
			checkResp: func(t *testing.T, got any) {
				if s := got.(*JobSummary); s.Summary["g"].Failed != 1 {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "job deregister with purge",
			body: `{"EvalID":"e9"}`,
			call: func(c *Client) (any, error) {
				id, _, err := c.Jobs().Deregister("web", true, nil)
				return id, err
			},
			method: "DELETE", path: "/v1/job/web", query: "purge=true",
			checkResp: func(t *testing.T, got any) {
				if got.(string) != "e9" {
					t.Errorf("got %v", got)
				}
			},
		},
		{
			name:   "jobs parse",
			body:   `{"ID":"p"}`,
			call:   func(c *Client) (any, error) { return c.Jobs().ParseHCL(`job "p" {}`, true) },
			method: "PUT", path: "/v1/jobs/parse", reqBody: `"Canonicalize":true`,
			checkResp: func(t *testing.T, got any) {
				if *got.(*Job).ID != "p" {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name: "alloc info",
			body: `{"ID":"a1","ClientStatus":"running","TaskStates":{"t":{"State":"dead","FinishedAt":"2026-01-04T14:58:51Z","Events":[{"Type":"Terminated","ExitCode":130,"Signal":2}]}}}`,
			call: func(c *Client) (any, error) {
				a, _, err := c.Allocations().Info("a1", nil)
				return a, err
			},
			method: "GET", path: "/v1/allocation/a1",
			checkResp: func(t *testing.T, got any) {
				a := got.(*Allocation)
				ev := a.TaskStates["t"].Events[0]
				if ev.ExitCode != 130 || ev.Signal != 2 || a.TaskStates["t"].FinishedAt.IsZero() {
					t.Errorf("got %+v", a.TaskStates["t"])
				}
			},
		},
		{
			name: "alloc list with wait",
			body: `[]`,
			call: func(c *Client) (any, error) {
				l, _, err := c.Allocations().List(&QueryOptions{WaitIndex: 4, WaitTime: 2 * time.Second})
				return l, err
			},
			method: "GET", path: "/v1/allocations", query: "index=4&wait=2000ms",
		},
		{
			name:   "eval info",
			body:   `{"ID":"e1","Status":"complete"}`,
			call:   func(c *Client) (any, error) { e, _, err := c.Evaluations().Info("e1", nil); return e, err },
			method: "GET", path: "/v1/evaluation/e1",
			checkResp: func(t *testing.T, got any) {
				if !got.(*Evaluation).Terminal() {
					t.Error("complete eval is not terminal")
				}
			},
		},
		{
			name:   "eval list",
			body:   `[]`,
			call:   func(c *Client) (any, error) { l, _, err := c.Evaluations().List(nil); return l, err },
			method: "GET", path: "/v1/evaluations",
		},
		{
			name:   "eval allocations",
			body:   `[{"ID":"a"}]`,
			call:   func(c *Client) (any, error) { l, _, err := c.Evaluations().Allocations("e1", nil); return l, err },
			method: "GET", path: "/v1/evaluation/e1/allocations",
		},
		{
			name:   "node list",
			body:   `[{"ID":"n1","Status":"ready","Drivers":{"raw_exec":{"Detected":true,"Healthy":true}}}]`,
			call:   func(c *Client) (any, error) { l, _, err := c.Nodes().List(nil); return l, err },
			method: "GET", path: "/v1/nodes",
			checkResp: func(t *testing.T, got any) {
				if l := got.([]*NodeListStub); !l[0].Drivers["raw_exec"].Healthy {
					t.Errorf("got %+v", l[0])
				}
			},
		},
		{
			name:   "node info",
			body:   `{"ID":"n1","NodeResources":{"Cpu":{"CpuShares":4000},"Memory":{"MemoryMB":8000}}}`,
			call:   func(c *Client) (any, error) { n, _, err := c.Nodes().Info("n1", nil); return n, err },
			method: "GET", path: "/v1/node/n1",
			checkResp: func(t *testing.T, got any) {
				if n := got.(*Node); n.NodeResources.Memory.MemoryMB != 8000 {
					t.Errorf("got %+v", n)
				}
			},
		},
		{
			name:   "node allocations",
			body:   `[{"ID":"a"}]`,
			call:   func(c *Client) (any, error) { l, _, err := c.Nodes().Allocations("n1", nil); return l, err },
			method: "GET", path: "/v1/node/n1/allocations",
		},
		{
			name:   "leader",
			body:   `"127.0.0.1:4647"`,
			call:   func(c *Client) (any, error) { return c.Status().Leader() },
			method: "GET", path: "/v1/status/leader",
			checkResp: func(t *testing.T, got any) {
				if got.(string) != "127.0.0.1:4647" {
					t.Errorf("got %v", got)
				}
			},
		},
		{
			name:   "peers",
			body:   `["127.0.0.1:4647"]`,
			call:   func(c *Client) (any, error) { return c.Status().Peers() },
			method: "GET", path: "/v1/status/peers",
		},
		{
			name:   "agent self",
			body:   `{"config":{"Region":"global"},"member":{"Name":"dev"},"stats":{}}`,
			call:   func(c *Client) (any, error) { return c.Agent().Self() },
			method: "GET", path: "/v1/agent/self",
			checkResp: func(t *testing.T, got any) {
				if got.(*AgentSelf).Member.Name != "dev" {
					t.Errorf("got %+v", got)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := fakeAgent(t, 200, tc.body, nil)
			got, err := tc.call(c)
			if err != nil {
				t.Fatal(err)
			}
			if rec.method != tc.method || rec.path != tc.path || rec.query != tc.query {
				t.Errorf("request = %s %s?%s, want %s %s?%s", rec.method, rec.path, rec.query, tc.method, tc.path, tc.query)
			}
			if !strings.Contains(rec.body, tc.reqBody) {
				t.Errorf("body %s does not contain %s", rec.body, tc.reqBody)
			}
			if tc.checkResp != nil {
				tc.checkResp(t, got)
			}
		})
	}
}

func TestQueryMetaFromHeaders(t *testing.T) {
	c, _ := fakeAgent(t, 200, `[]`, map[string]string{
		"X-Nomad-Index": "42", "X-Nomad-KnownLeader": "true", "X-Nomad-LastContact": "15",
	})
	_, qm, err := c.Jobs().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if qm.LastIndex != 42 || !qm.KnownLeader || qm.LastContact != 15*time.Millisecond {
		t.Errorf("got %+v", qm)
	}
}

func TestErrorCarriesServerMessage(t *testing.T) {
	c, _ := fakeAgent(t, 404, "job not found\n", nil)
	_, _, err := c.Jobs().Info("nope", nil)
	var ue *UnexpectedResponseError
	if !errors.As(err, &ue) || ue.StatusCode != 404 || ue.Message != "job not found" {
		t.Fatalf("got %#v", err)
	}
	if !IsNotFound(err) || ErrorMessage(err) != "job not found" {
		t.Errorf("IsNotFound/ErrorMessage wrong for %v", err)
	}
}

func TestConnectError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	c, err := NewClient(&Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Jobs().List(nil)
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Address != addr {
		t.Fatalf("got %#v", err)
	}
}

func TestNamespaceFromConfigAndOptions(t *testing.T) {
	c, rec := fakeAgent(t, 200, `[]`, nil)
	c.namespace = "prod"
	if _, _, err := c.Jobs().List(nil); err != nil {
		t.Fatal(err)
	}
	if rec.query != "namespace=prod" {
		t.Errorf("query = %q", rec.query)
	}
	if _, _, err := c.Jobs().List(&QueryOptions{Namespace: "*", Params: map[string]string{"meta": "true"}}); err != nil {
		t.Fatal(err)
	}
	if rec.query != "meta=true&namespace=%2A" {
		t.Errorf("query = %q", rec.query)
	}
}

func TestDefaultConfigAddress(t *testing.T) {
	cases := []struct{ drover, nomad, want string }{
		{"", "", DefaultAddress},
		{"", "http://n:1", "http://n:1"},
		{"http://d:2", "http://n:1", "http://d:2"},
	}
	for _, tc := range cases {
		t.Setenv("DROVER_ADDR", tc.drover)
		t.Setenv("NOMAD_ADDR", tc.nomad)
		if got := DefaultConfig().Address; got != tc.want {
			t.Errorf("DROVER_ADDR=%q NOMAD_ADDR=%q: got %q want %q", tc.drover, tc.nomad, got, tc.want)
		}
	}
}

func TestNewClientAddress(t *testing.T) {
	cases := []struct {
		in, want string
		err      bool
	}{
		{"127.0.0.1:4646", "http://127.0.0.1:4646", false},
		{"https://x:1", "https://x:1", false},
		{"ftp://x", "", true},
		{"http://", "", true},
	}
	for _, tc := range cases {
		c, err := NewClient(&Config{Address: tc.in})
		if tc.err {
			if err == nil {
				t.Errorf("%q: want error", tc.in)
			}
			continue
		}
		if err != nil || c.Address() != tc.want {
			t.Errorf("%q: got %v, %v", tc.in, c, err)
		}
	}
}

// TestImportsNothingOfDrover keeps api usable on its own.
func TestImportsNothingOfDrover(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/drover-io/drover/") && dep != "github.com/drover-io/drover/api" {
			t.Errorf("api imports %s", dep)
		}
	}
}

// TestAllocationDecodesNomadShapes checks a realistic agent answer decodes.
func TestAllocationDecodesNomadShapes(t *testing.T) {
	src := `{"ID":"a","Job":{"ID":"web","TaskGroups":[{"Name":"g","Count":1}]},"Metrics":{"NodesEvaluated":1},"AllocatedResources":{"Tasks":{"t":{"Cpu":{"CpuShares":100},"Memory":{"MemoryMB":64}}},"Shared":{"DiskMB":10}}}`
	var a Allocation
	if err := json.Unmarshal([]byte(src), &a); err != nil {
		t.Fatal(err)
	}
	if *a.Job.TaskGroups[0].Name != "g" || a.AllocatedResources.Tasks["t"].Memory.MemoryMB != 64 {
		t.Errorf("got %+v", a)
	}
}

func TestSecretIDSentAsToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("X-Nomad-Token")
		_, _ = io.WriteString(w, `""`)
	}))
	defer srv.Close()
	c, err := NewClient(&Config{Address: srv.URL, SecretID: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Status().Leader(); err != nil {
		t.Fatal(err)
	}
	if got != "s3cret" {
		t.Errorf("X-Nomad-Token = %q", got)
	}
}
