package allocrunner

import (
	"errors"
	"fmt"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/structs"
)

// restoreLocalState loads the runner's own persisted state (see
// state.AllocRunnerLocalState). A health verdict is kept only when it was
// decided for the allocation's current deployment; a state written by a
// newer layout version, or one that cannot be read, is ignored (the
// runner decides again).
func (ar *AllocRunner) restoreLocalState() error {
	s, err := ar.stateDB.GetAllocRunnerState(ar.id)
	if errors.Is(err, state.ErrClosed) {
		return fmt.Errorf("restore alloc runner state: %w", err)
	}
	if err != nil {
		// Optional state: without it the runner decides again, which is
		// better than not restoring the allocation and its tasks.
		ar.logger.Error("could not restore alloc runner state; deciding health and migration again", "error", err)
		return nil
	}
	if s == nil {
		return nil
	}
	if s.Version > state.AllocRunnerStateVersion {
		ar.logger.Warn("ignoring alloc runner state written by a newer agent",
			"version", s.Version, "known_version", state.AllocRunnerStateVersion)
		return nil
	}
	alloc := ar.Alloc()
	ar.mu.Lock()
	defer ar.mu.Unlock()
	ar.prevMigrated = s.PrevAllocMigrated
	// A verdict outside a deployment ("") is the migrate block's.
	if s.DeploymentStatus != nil && s.DeploymentID == alloc.DeploymentID {
		ar.deployStatus = s.DeploymentStatus
		ar.deployStatusFor = s.DeploymentID
	}
	return nil
}

// changeLocalState persists the runner's own state with change applied
// and only then makes it the runner's state: what AllocState shows, and
// so what the servers may act on, is never newer than what a restarted
// agent restores. localPersistMu serializes the changes, so the stored
// state is never older than one shown.
func (ar *AllocRunner) changeLocalState(change func(*state.AllocRunnerLocalState)) {
	ar.localPersistMu.Lock()
	defer ar.localPersistMu.Unlock()
	ar.mu.RLock()
	s := &state.AllocRunnerLocalState{
		Version:           state.AllocRunnerStateVersion,
		DeploymentStatus:  ar.deployStatus.Copy(),
		DeploymentID:      ar.deployStatusFor,
		PrevAllocMigrated: ar.prevMigrated,
	}
	ar.mu.RUnlock()
	change(s)
	if s.DeploymentStatus == nil {
		s.DeploymentID = ""
	}
	if err := ar.stateDB.PutAllocRunnerState(ar.id, s); err != nil {
		// The runner goes on with the change: it only lacks the state to
		// restore after an agent restart (it then decides again).
		ar.logger.Error("could not persist alloc runner state", "error", err)
	}
	ar.mu.Lock()
	ar.deployStatus = s.DeploymentStatus.Copy()
	ar.deployStatusFor = s.DeploymentID
	ar.prevMigrated = s.PrevAllocMigrated
	ar.mu.Unlock()
}

// setDeploymentStatus records the deployment health verdict for a
// deployment (nil: none), persists it, and then publishes it.
func (ar *AllocRunner) setDeploymentStatus(deploymentID string, s *structs.AllocDeploymentStatus) {
	ar.changeLocalState(func(ls *state.AllocRunnerLocalState) {
		ls.DeploymentStatus, ls.DeploymentID = s.Copy(), deploymentID
	})
	ar.publish()
}

// decidedVerdict returns the decided health verdict and its deployment;
// "" when none is decided.
func (ar *AllocRunner) decidedVerdict() (string, *structs.AllocDeploymentStatus) {
	ar.mu.RLock()
	defer ar.mu.RUnlock()
	if ar.deployStatus == nil || ar.deployStatus.Healthy == nil {
		return "", nil
	}
	return ar.deployStatusFor, ar.deployStatus.Copy()
}

// hasDeploymentStatus reports whether a deployment status is recorded.
func (ar *AllocRunner) hasDeploymentStatus() bool {
	ar.mu.RLock()
	defer ar.mu.RUnlock()
	return ar.deployStatus != nil
}

// prevAllocMigrated reports whether the waits for the preempted and
// previous allocations and the data migration completed (possibly before
// an agent restart).
func (ar *AllocRunner) prevAllocMigrated() bool {
	ar.mu.RLock()
	defer ar.mu.RUnlock()
	return ar.prevMigrated
}

// setPrevAllocMigrated records and persists that the waits and the
// migration completed.
func (ar *AllocRunner) setPrevAllocMigrated() {
	ar.changeLocalState(func(ls *state.AllocRunnerLocalState) { ls.PrevAllocMigrated = true })
}
