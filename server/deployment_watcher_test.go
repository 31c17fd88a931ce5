package server

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestHealthChanged(t *testing.T) {
	yes, no := true, false
	verdict := func(h bool) *structs.AllocDeploymentStatus { return &structs.AllocDeploymentStatus{Healthy: &h} }
	old := &structs.Allocation{ID: "a", DeploymentID: "d1", ClientStatus: structs.AllocClientStatusRunning}
	cases := []struct {
		name string
		u    *structs.Allocation
		want bool
	}{
		{"no verdict", &structs.Allocation{ClientStatus: structs.AllocClientStatusRunning}, false},
		{"verdict for the alloc's deployment", &structs.Allocation{DeploymentID: "d1", DeploymentStatus: verdict(yes)}, true},
		{"verdict outside any deployment (migrate) for an alloc in one", &structs.Allocation{DeploymentStatus: verdict(no)}, false},
		{"stale verdict for the previous deployment", &structs.Allocation{DeploymentID: "d0", DeploymentStatus: verdict(yes)}, false},
		{"failed", &structs.Allocation{ClientStatus: structs.AllocClientStatusFailed}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := healthChanged(old, c.u); got != c.want {
				t.Errorf("healthChanged = %v, want %v", got, c.want)
			}
		})
	}
}
