package allocrunner

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/client/allocnet"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// fakeNetwork records the calls of the network hook.
type fakeNetwork struct {
	mu        sync.Mutex
	setups    []allocnet.Request
	teardowns []string
}

func (f *fakeNetwork) Setup(ctx context.Context, req *allocnet.Request) (*allocnet.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setups = append(f.setups, *req)
	return &allocnet.Status{Path: "/netns/" + req.AllocID, IP: "172.26.64.9"}, nil
}

func (f *fakeNetwork) Teardown(ctx context.Context, allocID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.teardowns = append(f.teardowns, allocID)
	return nil
}

func networkAlloc(mode string) *structs.Allocation {
	return &structs.Allocation{
		ID: "a1", TaskGroup: "g",
		Job: &structs.Job{TaskGroups: []*structs.TaskGroup{{Name: "g", Networks: []*structs.NetworkResource{{Mode: mode}}}}},
		AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
			Ports: structs.AllocatedPorts{{Label: "http", Value: 23456, To: 8080, HostIP: "127.0.0.1"}},
		}},
	}
}

func TestNetworkHook(t *testing.T) {
	ctx := context.Background()
	t.Run("bridge: setup with the ports, spec for the tasks, teardown after", func(t *testing.T) {
		f := &fakeNetwork{}
		h := &networkHook{manager: f}
		alloc := networkAlloc("bridge")
		if err := h.Prerun(ctx, &PrerunRequest{Alloc: alloc}, &PrerunResponse{}); err != nil {
			t.Fatal(err)
		}
		want := allocnet.Request{AllocID: "a1", Mode: "bridge", Ports: []allocnet.Port{{HostIP: "127.0.0.1", HostPort: 23456, ContainerPort: 8080}}}
		if len(f.setups) != 1 || !reflect.DeepEqual(f.setups[0], want) {
			t.Fatalf("setups %+v, want [%+v]", f.setups, want)
		}
		if got := h.Spec(); !reflect.DeepEqual(got, &drivers.NetworkIsolationSpec{Path: "/netns/a1", IP: "172.26.64.9"}) {
			t.Fatalf("spec %+v", got)
		}
		h.Postrun(ctx, &PostrunRequest{Alloc: alloc}, &PostrunResponse{})
		h.Destroy(ctx, &DestroyRequest{Alloc: alloc}, &DestroyResponse{})
		if len(f.teardowns) != 2 || h.Spec() != nil {
			t.Fatalf("teardowns %v, spec %+v: want the namespace removed (idempotently) after the tasks", f.teardowns, h.Spec())
		}
	})
	t.Run("host mode: nothing", func(t *testing.T) {
		f := &fakeNetwork{}
		h := &networkHook{manager: f}
		alloc := networkAlloc("host")
		if err := h.Prerun(ctx, &PrerunRequest{Alloc: alloc}, &PrerunResponse{}); err != nil {
			t.Fatal(err)
		}
		h.Destroy(ctx, &DestroyRequest{Alloc: alloc}, &DestroyResponse{})
		if len(f.setups)+len(f.teardowns) != 0 || h.Spec() != nil {
			t.Fatalf("calls %+v %+v", f.setups, f.teardowns)
		}
	})
	t.Run("bridge without CNI: the allocation fails with the reason", func(t *testing.T) {
		h := &networkHook{}
		err := h.Prerun(ctx, &PrerunRequest{Alloc: networkAlloc("cni/mynet")}, &PrerunResponse{})
		if err == nil || !strings.Contains(err.Error(), `network mode "cni/mynet": this client has no CNI networking`) {
			t.Fatalf("err = %v", err)
		}
	})
}
