package client

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

// fakeNetworkDriver lists infra networks per node and records removals.
type fakeNetworkDriver struct {
	byNode    map[string][]string
	destroyed []string
	failOn    string
}

func (f *fakeNetworkDriver) CreateNetwork(context.Context, *drivers.CreateNetworkRequest) (*drivers.NetworkIsolationSpec, error) {
	return nil, errors.New("not used")
}

func (f *fakeNetworkDriver) DestroyNetwork(_ context.Context, allocID string) error {
	if allocID == f.failOn {
		return errors.New("daemon says no")
	}
	f.destroyed = append(f.destroyed, allocID)
	return nil
}

func (f *fakeNetworkDriver) Networks(_ context.Context, nodeID string) ([]string, error) {
	return f.byNode[nodeID], nil
}

// A restarted client removes what a driver made for its node's
// allocations it does not run, keeps its running ones', and never
// touches another node's; a failure is reported, the rest still removed.
func TestSweepDriverNetworks(t *testing.T) {
	f := &fakeNetworkDriver{byNode: map[string][]string{"n1": {"run", "gone1", "gone2"}, "n2": {"other"}}, failOn: "gone1"}
	known := func(id string) bool { return id == "run" }
	err := sweepDriverNetworks(context.Background(), f, "n1", known)
	if err == nil {
		t.Fatal("the failed removal was not reported")
	}
	if !reflect.DeepEqual(f.destroyed, []string{"gone2"}) {
		t.Fatalf("destroyed %v, want [gone2]", f.destroyed)
	}
}
