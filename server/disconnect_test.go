package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// TestDisconnectReconcile partitions a node whose service has a disconnect
// block, on a stepped clock, and brings it back: its allocation turns
// unknown (not lost), is replaced only with replace = true, and once the
// node is back exactly one of the original and its replacement keeps
// running, as reconcile says. Past lost_after the node is down and the
// allocation lost.
func TestDisconnectReconcile(t *testing.T) {
	for _, tc := range []struct {
		name      string
		replace   bool
		reconcile string
		back      time.Duration // how long after the TTL the node is heard again; 0: never
		keepOn    string        // node whose allocation runs at the end
		lost      bool
	}{
		{name: "not replaced, back in time", replace: false, reconcile: structs.ReconcileBestScore, back: 30 * time.Second, keepOn: "n1"},
		{name: "replaced, keep_original", replace: true, reconcile: structs.ReconcileKeepOriginal, back: 30 * time.Second, keepOn: "n1"},
		{name: "replaced, keep_replacement", replace: true, reconcile: structs.ReconcileKeepReplacement, back: 30 * time.Second, keepOn: "n2"},
		{name: "replaced, longest_running", replace: true, reconcile: structs.ReconcileLongestRunning, back: 30 * time.Second, keepOn: "n1"},
		{name: "not back within lost_after", replace: false, reconcile: structs.ReconcileBestScore, keepOn: "n2", lost: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				clock := &fakeClock{now: time.Unix(1000, 0)}
				s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 10 * time.Second })
				n1TTL := registerNode(t, s, testNode("n1", 4000, 4096)).HeartbeatTTL
				job := testJob("web", 1, 100, 100)
				job.Type = structs.JobTypeService
				job.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Minute, Replace: tc.replace, Reconcile: tc.reconcile}
				r := registerJob(t, s, job)
				waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
				report := func(node string, a *structs.Allocation, status string) {
					t.Helper()
					if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: node, SecretID: "secret-" + node, Alloc: []*structs.Allocation{{
						ID: a.ID, ClientStatus: status,
						TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateRunning, StartedAt: clock.Now()}}}}}); err != nil {
						t.Fatal(err)
					}
				}
				orig := allocsOf(t, s, "web", "")[0]
				report("n1", orig, structs.AllocClientStatusRunning)
				clock.Step(time.Second)

				// n2 keeps heartbeating; n1 falls silent.
				heartbeat := func(node string) {
					t.Helper()
					if _, err := s.NodeUpdateStatus(ctx, &structs.NodeUpdateStatusRequest{NodeID: node, SecretID: "secret-" + node, Status: structs.NodeStatusReady}); err != nil {
						t.Fatal(err)
					}
				}
				registerNode(t, s, testNode("n2", 4000, 4096))
				passed := time.Duration(0)
				step := func(d time.Duration) {
					for d > 0 {
						heartbeat("n2")
						st := min(d, 5*time.Second)
						clock.Step(st)
						passed += st
						d -= st
					}
				}
				step(n1TTL + 11*time.Second) // past TTL and grace (the default 0 grace plus margin)
				waitState(t, s, "n1 disconnected", func(ws memdb.WatchSet) (bool, string) {
					n, _ := s.State().NodeByID(ws, "n1")
					a, _ := s.State().AllocByID(ws, orig.ID)
					return n.Status == structs.NodeStatusDisconnected && a.ClientStatus == structs.AllocClientStatusUnknown,
						n.Status + " " + a.ClientStatus
				})
				var replacement *structs.Allocation
				if tc.replace {
					waitState(t, s, "a replacement on n2", func(ws memdb.WatchSet) (bool, string) {
						for _, a := range allocsOfWatch(t, s, ws, "web", structs.AllocDesiredStatusRun) {
							if a.NodeID == "n2" {
								replacement = a
								return true, ""
							}
						}
						return false, "none"
					})
					report("n2", replacement, structs.AllocClientStatusRunning)
				}
				if tc.back > 0 {
					step(tc.back)
					heartbeat("n1")
				} else {
					step(2 * time.Minute)
				}
				want := 1
				waitState(t, s, "one allocation left running", func(ws memdb.WatchSet) (bool, string) {
					var runOn []string
					for _, a := range allocsOfWatch(t, s, ws, "web", structs.AllocDesiredStatusRun) {
						if !a.ClientTerminalStatus() {
							runOn = append(runOn, a.NodeID+":"+a.ClientStatus)
						}
					}
					if tc.lost && len(runOn) == 1 && runOn[0] == "n2:pending" {
						return true, ""
					}
					return len(runOn) == want && runOn[0] == tc.keepOn+":running", fmt.Sprint(runOn)
				})
				a, _ := s.State().AllocByID(nil, orig.ID)
				n, _ := s.State().NodeByID(nil, "n1")
				if tc.lost {
					if a.ClientStatus != structs.AllocClientStatusLost || n.Status != structs.NodeStatusDown {
						t.Fatalf("past lost_after: alloc %s, node %s", a.ClientStatus, n.Status)
					}
				} else if n.Status != structs.NodeStatusReady {
					t.Fatalf("node %s after it came back", n.Status)
				}
			})
		})
	}
}
