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
	if s.DeploymentStatus != nil && s.DeploymentID != "" && s.DeploymentID == alloc.DeploymentID {
		ar.deployStatus = s.DeploymentStatus
		ar.deployStatusFor = s.DeploymentID
	}
	return nil
}

// persistLocalState stores the runner's own state as it is now.
func (ar *AllocRunner) persistLocalState() {
	ar.localPersistMu.Lock()
	defer ar.localPersistMu.Unlock()
	ar.mu.RLock()
	s := &state.AllocRunnerLocalState{
		Version:           state.AllocRunnerStateVersion,
		DeploymentStatus:  ar.deployStatus.Copy(),
		PrevAllocMigrated: ar.prevMigrated,
	}
	if s.DeploymentStatus != nil {
		s.DeploymentID = ar.deployStatusFor
	}
	ar.mu.RUnlock()
	if err := ar.stateDB.PutAllocRunnerState(ar.id, s); err != nil {
		ar.logger.Error("could not persist alloc runner state", "error", err)
	}
}

// setDeploymentStatus records the deployment health verdict for a
// deployment (nil: none), persists and publishes it.
func (ar *AllocRunner) setDeploymentStatus(deploymentID string, s *structs.AllocDeploymentStatus) {
	ar.mu.Lock()
	ar.deployStatus = s.Copy()
	ar.deployStatusFor = deploymentID
	if s == nil {
		ar.deployStatusFor = ""
	}
	ar.mu.Unlock()
	ar.persistLocalState()
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
	ar.mu.Lock()
	ar.prevMigrated = true
	ar.mu.Unlock()
	ar.persistLocalState()
}
