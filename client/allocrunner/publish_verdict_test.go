package allocrunner

import (
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

// TestPublishSendsOnlyTheRunnersVerdict: an allocation whose server copy
// carries a deployment status (a verdict of an earlier deployment, a
// canary's flag) and whose runner has decided nothing sends the servers no
// verdict: echoing the server's copy back, with the deployment ID of no
// verdict, would have it judged as a verdict of the runner's. Listeners
// still see the server's deployment status.
func TestPublishSendsOnlyTheRunnersVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		healthy := true
		alloc := testAlloc(structs.JobTypeBatch, mockTask("a", map[string]any{"run_for": "5ms"}))
		alloc.DeploymentID = "d1"
		alloc.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &healthy, Canary: true}
		h := newHarness(t, alloc)
		l := h.ar.Listen()
		defer l.Close()
		go h.ar.Run()
		waitClosed(t, "run", h.ar.WaitCh())
		h.rec.mu.Lock()
		updates := h.rec.updates
		h.rec.mu.Unlock()
		if len(updates) == 0 {
			t.Fatal("no update sent to the client")
		}
		for i, u := range updates {
			if u.DeploymentStatus != nil || u.DeploymentID != "" {
				t.Errorf("update %d (%s) sends deployment %q status %+v: the runner decided no verdict", i, u.ClientStatus, u.DeploymentID, u.DeploymentStatus)
			}
		}
		got := <-l.Ch()
		if got.DeploymentStatus == nil || !got.DeploymentStatus.Canary {
			t.Errorf("listener's alloc deployment status = %+v, want the server's", got.DeploymentStatus)
		}
	})
}
