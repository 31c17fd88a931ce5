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
		want := allocnet.Request{AllocID: "a1", Mode: "bridge", Ports: []allocnet.Port{{HostIP: "127.0.0.1", HostPort: 23456, ContainerPort: 8080}},
			Args: map[string]string{"IgnoreUnknown": "1", "NOMAD_ALLOC_ID": "a1", "NOMAD_GROUP_NAME": "g"}}
		if len(f.setups) != 1 || !reflect.DeepEqual(f.setups[0], want) {
			t.Fatalf("setups %+v, want [%+v]", f.setups, want)
		}
		if got := h.Spec(); !reflect.DeepEqual(got, &drivers.NetworkIsolationSpec{Path: "/netns/a1", IP: "172.26.64.9", Labels: map[string]string(nil)}) {
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

// fakeMaker is a driver that makes namespaces (docker's infra container).
type fakeMaker struct {
	drivers.DriverPlugin // nil: only the methods below are called
	mu                   sync.Mutex
	creates              []drivers.CreateNetworkRequest
	destroys             []string
}

func (f *fakeMaker) Capabilities() *drivers.Capabilities {
	return &drivers.Capabilities{MustInitiateNetwork: true}
}

func (f *fakeMaker) CreateNetwork(ctx context.Context, req *drivers.CreateNetworkRequest) (*drivers.NetworkIsolationSpec, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates = append(f.creates, *req)
	return &drivers.NetworkIsolationSpec{Path: "/proc/42/ns/net", Labels: map[string]string{drivers.NetworkLabelSandboxContainer: "c1"}}, nil
}

func (f *fakeMaker) DestroyNetwork(ctx context.Context, allocID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.destroys = append(f.destroys, allocID)
	return nil
}

func (f *fakeMaker) Networks(ctx context.Context, nodeID string) ([]string, error) { return nil, nil }

// plainDriver makes no namespaces (exec).
type plainDriver struct{ drivers.DriverPlugin }

func (plainDriver) Capabilities() *drivers.Capabilities { return &drivers.Capabilities{} }

// A group with a docker task: the driver makes the namespace with the
// group's hostname and dns, the manager wires it (Source) with the
// group's CNI args, every task's spec carries the infra container's
// labels, hostname and dns, the status is reported, and teardown removes
// the wiring, then the driver's namespace.
func TestNetworkHookDriverMadeNamespace(t *testing.T) {
	ctx := context.Background()
	f, maker := &fakeNetwork{}, &fakeMaker{}
	getter := func(name string) (drivers.DriverPlugin, error) {
		if name == "docker" {
			return maker, nil
		}
		return plainDriver{}, nil
	}
	h := &networkHook{manager: f, drivers: getter}
	alloc := networkAlloc("bridge")
	alloc.Namespace, alloc.JobID, alloc.NodeID = "default", "countdash", "n1"
	alloc.Job.Region = "global"
	tg := alloc.Job.TaskGroups[0]
	tg.Tasks = []*structs.Task{{Name: "api", Driver: "exec"}, {Name: "web", Driver: "docker"}}
	dns := &structs.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"svc"}}
	tg.Networks[0].Hostname, tg.Networks[0].DNS = "dash", dns
	tg.Networks[0].CNI = &structs.CNIConfig{Args: map[string]string{"IgnoreUnknown": "true", "K": "v"}}
	if err := h.Prerun(ctx, &PrerunRequest{Alloc: alloc}, &PrerunResponse{}); err != nil {
		t.Fatal(err)
	}
	wantCreate := drivers.CreateNetworkRequest{AllocID: "a1", NodeID: "n1", Hostname: "dash", DNS: &drivers.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"svc"}}}
	if len(maker.creates) != 1 || !reflect.DeepEqual(maker.creates[0], wantCreate) {
		t.Fatalf("creates %+v, want [%+v]", maker.creates, wantCreate)
	}
	wantArgs := map[string]string{"IgnoreUnknown": "true", "K": "v", "NOMAD_ALLOC_ID": "a1", "NOMAD_GROUP_NAME": "g",
		"NOMAD_JOB_ID": "countdash", "NOMAD_NAMESPACE": "default", "NOMAD_REGION": "global"}
	if len(f.setups) != 1 || f.setups[0].Source != "/proc/42/ns/net" || !reflect.DeepEqual(f.setups[0].Args, wantArgs) {
		t.Fatalf("setups %+v: want the driver's namespace wired with args %v", f.setups, wantArgs)
	}
	spec := h.Spec()
	if spec.Path != "/netns/a1" || spec.Labels[drivers.NetworkLabelSandboxContainer] != "c1" || spec.Hostname != "dash" || spec.DNS.Servers[0] != "10.0.0.53" {
		t.Fatalf("spec %+v", spec)
	}
	wantStatus := &structs.AllocNetworkStatus{Address: "172.26.64.9", DNS: dns}
	if got := h.NetworkStatus(alloc); !reflect.DeepEqual(got, wantStatus) {
		t.Fatalf("status %+v, want %+v", got, wantStatus)
	}
	h.Postrun(ctx, &PostrunRequest{Alloc: alloc}, &PostrunResponse{})
	if len(f.teardowns) != 1 || len(maker.destroys) != 1 || h.Spec() != nil || h.NetworkStatus(alloc) != nil {
		t.Fatalf("teardowns %v destroys %v: want the wiring and the infra container removed", f.teardowns, maker.destroys)
	}
}

// NetworkStatus is the namespace's interface and addresses with the
// group's dns; none without a namespace.
func TestNetworkStatusConversion(t *testing.T) {
	cases := []struct {
		name string
		st   *allocnet.Status
		n    *structs.NetworkResource
		want *structs.AllocNetworkStatus
	}{
		{name: "none", n: &structs.NetworkResource{Mode: "bridge"}},
		{name: "bridge", st: &allocnet.Status{Path: "/n", InterfaceName: "eth0", IP: "172.26.64.2", IPv6: "fd00::2"},
			n:    &structs.NetworkResource{Mode: "bridge"},
			want: &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "172.26.64.2", AddressIPv6: "fd00::2"}},
		{name: "with dns", st: &allocnet.Status{InterfaceName: "eth0", IP: "10.1.0.2"},
			n:    &structs.NetworkResource{Mode: "cni/x", DNS: &structs.DNSConfig{Servers: []string{"1.1.1.1"}, Options: []string{"ndots:1"}}},
			want: &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "10.1.0.2", DNS: &structs.DNSConfig{Servers: []string{"1.1.1.1"}, Options: []string{"ndots:1"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := networkStatus(tc.st, tc.n); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// An allocation in host mode (no network block, or mode "host") reports
// a network status, with no interface or address of its own and the
// group's dns block (Nomad's TestAllocations_Info wants it non-nil); one
// in bridge mode reports none until its namespace is wired.
func TestNetworkHookStatusByMode(t *testing.T) {
	dns := &structs.DNSConfig{Servers: []string{"10.0.0.53"}}
	noBlock := networkAlloc("")
	noBlock.Job.TaskGroups[0].Networks = nil
	hostDNS := networkAlloc(structs.NetworkModeHost)
	hostDNS.Job.TaskGroups[0].Networks[0].DNS = dns
	cases := []struct {
		name  string
		alloc *structs.Allocation
		want  *structs.AllocNetworkStatus
	}{
		{"no network block", noBlock, &structs.AllocNetworkStatus{}},
		{"mode left empty", networkAlloc(""), &structs.AllocNetworkStatus{}},
		{"host with dns", hostDNS, &structs.AllocNetworkStatus{DNS: dns}},
		{"bridge not wired yet", networkAlloc("bridge"), nil},
		{"cni not wired yet", networkAlloc("cni/mynet"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &networkHook{}
			got := h.NetworkStatus(tc.alloc)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("status %+v, want %+v", got, tc.want)
			}
			if got != nil && got.DNS != nil && got.DNS == dns {
				t.Fatal("status shares the job's dns block: want a copy")
			}
		})
	}
}

// CNI args leave out identity values CNI_ARGS cannot carry.
func TestCNIArgsSemicolon(t *testing.T) {
	alloc := &structs.Allocation{ID: "a1", JobID: "a;b", TaskGroup: "g"}
	args := cniArgs(alloc, nil)
	if _, ok := args["NOMAD_JOB_ID"]; ok || args["NOMAD_ALLOC_ID"] != "a1" || args["IgnoreUnknown"] != "1" {
		t.Fatalf("args %v", args)
	}
}
