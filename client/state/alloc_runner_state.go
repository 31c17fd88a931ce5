package state

import (
	"github.com/drover-io/drover/structs"
)

// AllocRunnerStateVersion is the version of AllocRunnerLocalState this
// drover writes. Fields are only ever added (an older value decodes with
// the new fields unset); the version changes when a field's meaning does,
// so that a reader can tell a value it must not interpret.
const AllocRunnerStateVersion = 1

// AllocRunnerLocalState is an AllocRunner's own persisted state: what it
// decided or did that cannot be derived again from its tasks' states.
type AllocRunnerLocalState struct {
	// Version is the layout version, AllocRunnerStateVersion when written
	// by this drover; 0 is read as 1.
	Version int
	// DeploymentID is the deployment DeploymentStatus was decided for.
	DeploymentID string
	// DeploymentStatus is the client's deployment health verdict; nil
	// while undecided. The server may already have acted on it, so a
	// restarted agent keeps it instead of deciding again.
	DeploymentStatus *structs.AllocDeploymentStatus
	// PrevAllocMigrated records that the waits for the preempted and
	// previous allocations and the migration of the previous one's data
	// completed: a restored runner does not wait or migrate again.
	PrevAllocMigrated bool
}

// Copy returns a deep copy of the state.
func (s *AllocRunnerLocalState) Copy() *AllocRunnerLocalState {
	if s == nil {
		return nil
	}
	c := *s
	c.DeploymentStatus = s.DeploymentStatus.Copy()
	return &c
}

// Equal reports whether two states hold the same values.
func (s *AllocRunnerLocalState) Equal(o *AllocRunnerLocalState) bool {
	if s == nil || o == nil {
		return s == o
	}
	if s.Version != o.Version || s.DeploymentID != o.DeploymentID || s.PrevAllocMigrated != o.PrevAllocMigrated {
		return false
	}
	a, b := s.DeploymentStatus, o.DeploymentStatus
	if a == nil || b == nil {
		return a == b
	}
	if (a.Healthy == nil) != (b.Healthy == nil) || (a.Healthy != nil && *a.Healthy != *b.Healthy) {
		return false
	}
	return a.Timestamp.Equal(b.Timestamp) && a.Canary == b.Canary && a.ModifyIndex == b.ModifyIndex
}
