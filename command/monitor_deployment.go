package command

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

// The second half of `job run`'s monitor, after the evaluation: a service
// job whose groups have an update strategy gets a deployment for each new
// version (its first one too), and the job is up once the deployment is
// successful, that is once its allocations were healthy for
// min_healthy_time. As Nomad's, the monitor follows it until it ends and
// exits 0 when it succeeded, 1 when it failed or was cancelled.

// followDeployment follows, once its evaluation ended with exit code code
// (0 or 2), the deployment of the job version registered at
// jobModifyIndex, and returns the command's exit code; ok is false when
// that version has no deployment.
func (mon *monitor) followDeployment(ctx context.Context, jobID string, jobModifyIndex uint64, code int) (exit int, ok bool) {
	dep, err := mon.deploymentFor(ctx, jobID, jobModifyIndex)
	switch {
	case err != nil && ctx.Err() != nil:
		return mon.timedOut(jobID), true
	case err != nil:
		return mon.m.fail("looking up the job's deployment", err), true
	case dep == nil:
		return code, false
	case code == exitPlacementFailure:
		// The deployment waits for capacity, until its progress
		// deadline: say so rather than wait that long.
		mon.header("Deployment %q waits for the allocations that could not be placed; follow it with `drover deployment status %s`", mon.id(dep.ID), mon.id(dep.ID))
		return code, true
	}
	return mon.watchDeployment(ctx, dep), true
}

// deploymentFor returns the deployment of the job version the submission
// registered (jobModifyIndex), nil when it has none: a batch job, a job
// without an update strategy, or an agent whose server has no deployments.
func (mon *monitor) deploymentFor(ctx context.Context, jobID string, jobModifyIndex uint64) (*api.Deployment, error) {
	d, _, err := mon.c.WithContext(ctx).Jobs().LatestDeployment(jobID, nil)
	var ue *api.UnexpectedResponseError
	switch {
	case errors.As(err, &ue) && (ue.StatusCode == http.StatusNotFound || ue.StatusCode == http.StatusNotImplemented):
		return nil, nil
	case err != nil:
		return nil, err
	case d == nil || d.ID == "" || d.JobSpecModifyIndex != jobModifyIndex:
		return nil, nil
	}
	return d, nil
}

// watchDeployment follows the deployment until it ends, printing its
// allocations as they are placed, change status and are found healthy or
// not, and each group's progress. It returns 0 when the deployment
// succeeded and 1 otherwise.
func (mon *monitor) watchDeployment(ctx context.Context, d *api.Deployment) int {
	c := mon.c.WithContext(ctx)
	mon.header("Monitoring deployment %q", mon.id(d.ID))
	w := &deploymentWatch{health: map[string]string{}, progress: map[string]string{}}
	index := d.ModifyIndex
	for {
		started := time.Now()
		allocs, _, err := c.Jobs().Allocations(d.JobID, true, nil)
		if err != nil {
			return mon.deploymentQueryFailed(ctx, d, err)
		}
		mon.reportDeploymentAllocs(w, d, allocs)
		mon.reportProgress(w, d)
		if d.Status != api.DeploymentStatusRunning && d.Status != api.DeploymentStatusPaused {
			return mon.deploymentEnded(d, allocs)
		}
		if awaitsPromotion(d) {
			// Nothing more happens until someone promotes it.
			mon.header("Deployment %q has healthy canaries and waits for its promotion: drover deployment promote %s",
				mon.id(d.ID), mon.id(d.ID))
			fmt.Fprint(mon.m.stdout, indent(formatDeploymentStatus(d, mon.verbose), "    "))
			return exitOK
		}
		next, qm, err := c.Deployments().Info(d.ID, &api.QueryOptions{WaitIndex: index, WaitTime: blockingWait})
		if err != nil {
			return mon.deploymentQueryFailed(ctx, d, err)
		}
		d = next
		index = mon.pace(ctx, started, index, qm)
		if ctx.Err() != nil {
			return mon.deploymentTimedOut(d)
		}
	}
}

// deploymentWatch is what the deployment monitor printed last.
type deploymentWatch struct {
	health   map[string]string // alloc ID -> "", "healthy" or "unhealthy"
	progress map[string]string // group -> its last progress line
	status   string
}

// reportDeploymentAllocs prints the deployment's allocations that are new
// to the monitor, and the client status and health changes of all of them.
func (mon *monitor) reportDeploymentAllocs(w *deploymentWatch, d *api.Deployment, allocs []*api.AllocationListStub) {
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].CreateIndex < allocs[j].CreateIndex })
	for _, a := range allocs {
		if !inDeployment(a, d) {
			continue
		}
		if _, seen := mon.allocs[a.ID]; !seen {
			mon.allocs[a.ID] = a
			mon.allocOrder = append(mon.allocOrder, a.ID)
			mon.allocStatus[a.ID] = a.ClientStatus
			mon.detail("Allocation %q created: node %q, group %q", mon.id(a.ID), mon.id(a.NodeID), a.TaskGroup)
		}
		mon.allocs[a.ID] = a
		if prev := mon.allocStatus[a.ID]; prev != a.ClientStatus {
			desc := ""
			if a.ClientDescription != "" {
				desc = " (" + a.ClientDescription + ")"
			}
			mon.detail("Allocation %q status changed: %q -> %q%s", mon.id(a.ID), prev, a.ClientStatus, desc)
			mon.allocStatus[a.ID] = a.ClientStatus
		}
		if h := allocHealth(a); h != w.health[a.ID] {
			w.health[a.ID] = h
			if h != "" {
				mon.detail("Allocation %q is %s", mon.id(a.ID), h)
			}
		}
	}
}

// reportProgress prints a group's counts when they change, and the
// deployment's status when it changes.
func (mon *monitor) reportProgress(w *deploymentWatch, d *api.Deployment) {
	for _, g := range sortedKeys(d.TaskGroups) {
		st := d.TaskGroups[g]
		if st == nil {
			continue
		}
		line := fmt.Sprintf("Group %q: %d desired, %d placed, %d healthy, %d unhealthy",
			g, st.DesiredTotal, st.PlacedAllocs, st.HealthyAllocs, st.UnhealthyAllocs)
		if line != w.progress[g] {
			w.progress[g] = line
			mon.detail("%s", line)
		}
	}
	if w.status != "" && d.Status != w.status {
		mon.detail("Deployment %q status changed: %q -> %q", mon.id(d.ID), w.status, d.Status)
	}
	w.status = d.Status
}

// deploymentEnded prints how the deployment ended and returns the exit
// code: 0 when it succeeded, 1 otherwise, with the failed allocations
// explained.
func (mon *monitor) deploymentEnded(d *api.Deployment, allocs []*api.AllocationListStub) int {
	if d.Status == api.DeploymentStatusSuccessful {
		mon.header("Deployment %q successful", mon.id(d.ID))
		fmt.Fprint(mon.m.stdout, indent(formatDeploymentStatus(d, mon.verbose), "    "))
		return exitOK
	}
	msg := fmt.Sprintf("Deployment %q %s", mon.id(d.ID), d.Status)
	if d.StatusDescription != "" {
		msg += ": " + d.StatusDescription
	}
	mon.header("%s", msg)
	fmt.Fprint(mon.m.stdout, indent(formatDeploymentStatus(d, mon.verbose), "    "))
	for _, a := range allocs {
		if !inDeployment(a, d) {
			continue
		}
		if a.ClientStatus == api.AllocClientStatusFailed || a.ClientStatus == api.AllocClientStatusLost || allocHealth(a) == "unhealthy" {
			fmt.Fprint(mon.m.stdout, allocFailureText(a, mon.verbose))
		}
	}
	return exitError
}

func (mon *monitor) deploymentQueryFailed(ctx context.Context, d *api.Deployment, err error) int {
	if ctx.Err() != nil {
		return mon.deploymentTimedOut(d)
	}
	fmt.Fprintln(mon.m.stderr, errorText("monitoring deployment", err))
	return exitError
}

func (mon *monitor) deploymentTimedOut(d *api.Deployment) int {
	mon.header("Timed out waiting for deployment %q; see `drover deployment status %s`", mon.id(d.ID), mon.id(d.ID))
	return exitError
}

// awaitsPromotion reports whether a running deployment waits for a
// promotion by hand: every group with canaries to promote has them
// healthy, and one of those groups lacks auto_promote (the servers
// promote automatically only when all have it).
func awaitsPromotion(d *api.Deployment) bool {
	canaries, auto := false, true
	for _, g := range d.TaskGroups {
		if g.DesiredCanaries == 0 || g.Promoted {
			continue
		}
		if g.HealthyAllocs < g.DesiredCanaries {
			return false
		}
		canaries, auto = true, auto && g.AutoPromote
	}
	return canaries && !auto && d.Status == api.DeploymentStatusRunning
}

// inDeployment reports whether a was placed by deployment d: the list
// entries of allocations do not carry their deployment, but every
// allocation placed for the deployment's job version while it runs joins
// it, from the plan that created it (same index) on. The index tells the
// allocations of a purged job with the same ID and version apart.
func inDeployment(a *api.AllocationListStub, d *api.Deployment) bool {
	return a.JobVersion == d.JobVersion && a.CreateIndex >= d.CreateIndex
}

// allocHealth is the client's verdict on an allocation of a deployment:
// "healthy", "unhealthy", or "" while it has none.
func allocHealth(a *api.AllocationListStub) string {
	if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
		return ""
	}
	if *a.DeploymentStatus.Healthy {
		return "healthy"
	}
	return "unhealthy"
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(l)
	}
	return b.String()
}
