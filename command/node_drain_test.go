package command

import (
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

const drainNodeID = "5e6f7a8b-0000-4000-8000-000000000001"

func newDrainAgent(t *testing.T) *opsAgent {
	f := newOpsAgent(t)
	f.json("GET /v1/nodes", []*api.NodeListStub{{ID: drainNodeID, Name: "n1", Status: "ready"}})
	f.json("GET /v1/agent/self", map[string]any{"stats": map[string]map[string]string{"client": {"node_id": drainNodeID}}})
	return f
}

func TestNodeDrainFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		body string // the drain request sent; "" for a usage error
	}{
		{"default deadline", []string{"-enable", "5e6f"},
			`{"NodeID":"` + drainNodeID + `","DrainSpec":{"Deadline":3600000000000,"IgnoreSystemJobs":false},"MarkEligible":false,"Meta":null}`},
		{"force, ignore system, self", []string{"-enable", "-force", "-ignore-system", "-self", "-yes"},
			`{"NodeID":"` + drainNodeID + `","DrainSpec":{"Deadline":-1,"IgnoreSystemJobs":true},"MarkEligible":false,"Meta":null}`},
		{"no deadline with meta", []string{"-enable", "-no-deadline", "-meta", "reason=kernel", "5e6f"},
			`{"NodeID":"` + drainNodeID + `","DrainSpec":{"Deadline":0,"IgnoreSystemJobs":false},"MarkEligible":false,"Meta":{"reason":"kernel"}}`},
		{"disable marks eligible", []string{"-disable", "5e6f"},
			`{"NodeID":"` + drainNodeID + `","DrainSpec":null,"MarkEligible":true,"Meta":null}`},
		{"disable keeping ineligible", []string{"-disable", "-keep-ineligible", "5e6f"},
			`{"NodeID":"` + drainNodeID + `","DrainSpec":null,"MarkEligible":false,"Meta":null}`},
		{"neither", []string{"5e6f"}, ""},
		{"both", []string{"-enable", "-disable", "5e6f"}, ""},
		{"force and no deadline", []string{"-enable", "-force", "-no-deadline", "5e6f"}, ""},
		{"no node", []string{"-enable"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDrainAgent(t)
			f.record("PUT /v1/node/"+drainNodeID+"/drain", 200, `{"NodeModifyIndex":7,"EvalIDs":[],"EvalCreateIndex":0,"Index":7}`)
			r := runCLI(t, f.srv.URL, nil, append([]string{"node", "drain"}, tc.args...)...)
			if tc.body == "" {
				if r.code == 0 {
					t.Fatalf("want a usage error: %+v", r)
				}
				return
			}
			if r.code != 0 || !strings.Contains(r.stdout, "drain strategy") {
				t.Fatalf("%+v", r)
			}
			if got := f.lastBody(); got != tc.body {
				t.Errorf("body = %s\nwant   %s", got, tc.body)
			}
		})
	}
}

func TestNodeEligibility(t *testing.T) {
	f := newDrainAgent(t)
	f.record("PUT /v1/node/"+drainNodeID+"/eligibility", 200, `{"NodeModifyIndex":7,"EvalIDs":[],"EvalCreateIndex":0,"Index":7}`)
	r := runCLI(t, f.srv.URL, nil, "node", "eligibility", "-disable", "5e6f")
	if r.code != 0 || !strings.Contains(r.stdout, "ineligible for scheduling") ||
		f.lastBody() != `{"NodeID":"`+drainNodeID+`","Eligibility":"ineligible"}` {
		t.Fatalf("%+v %s", r, f.lastBody())
	}
	r = runCLI(t, f.srv.URL, nil, "node", "eligibility", "-enable", "-self")
	if r.code != 0 || f.lastBody() != `{"NodeID":"`+drainNodeID+`","Eligibility":"eligible"}` {
		t.Fatalf("%+v %s", r, f.lastBody())
	}
	g := newDrainAgent(t)
	g.record("PUT /v1/node/"+drainNodeID+"/eligibility", 400, `node is draining: stop its drain first`)
	if r := runCLI(t, g.srv.URL, nil, "node", "eligibility", "-enable", "5e6f"); r.code == 0 || !strings.Contains(r.stderr, "draining") {
		t.Fatalf("refused: %+v", r)
	}
}

func TestSystemReconcileSummaries(t *testing.T) {
	f := newDrainAgent(t)
	f.record("PUT /v1/system/reconcile/summaries", 200, ``)
	if r := runCLI(t, f.srv.URL, nil, "system", "reconcile", "summaries"); r.code != 0 || r.stdout != "Reconciled job summaries\n" {
		t.Fatalf("%+v", r)
	}
}
