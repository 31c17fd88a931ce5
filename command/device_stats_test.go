package command

import (
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

func TestFormatDeviceStatsAndNodeDevices(t *testing.T) {
	util, used, total := 50.0, int64(1024), int64(4096)
	groups := []*api.DeviceGroupStats{{Vendor: "drover", Type: "gpu", Name: "fake", InstanceStats: map[string]*api.DeviceStats{
		"fake-0": {Summary: &api.StatValue{FloatNumeratorVal: &util, Unit: "%", Desc: "utilisation"},
			Stats: &api.StatObject{Attributes: map[string]*api.StatValue{"memory": {IntNumeratorVal: &used, IntDenominatorVal: &total, Unit: "MiB"}}}},
	}}}
	out := formatAllocStats(nil, &api.AllocResourceUsage{
		Tasks:         map[string]*api.TaskResourceUsage{"web": {ResourceUsage: &api.ResourceUsage{DeviceStats: groups}}},
		ResourceUsage: &api.ResourceUsage{DeviceStats: groups},
	})
	for _, want := range []string{`Task "web" Device Stats`, "Allocation Device Stats", "drover/gpu/fake", "fake-0", "utilisation 50.00 %", "memory=1024 / 4096 MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("alloc stats lack %q:\n%s", want, out)
		}
	}
	if got := formatDeviceStats(nil); got != "No device statistics\n" {
		t.Errorf("empty = %q", got)
	}
	mem := int64(16)
	node := &api.Node{NodeResources: &api.NodeResources{Devices: []*api.NodeDeviceResource{{Vendor: "drover", Type: "gpu", Name: "fake",
		Attributes: map[string]*api.Attribute{"memory": {IntVal: &mem, Unit: "GiB"}},
		Instances:  []*api.NodeDevice{{ID: "fake-0", Healthy: true}, {ID: "fake-1", HealthDescription: "configured unhealthy"}}}}}}
	nd := formatNodeDevices(node)
	for _, want := range []string{"Devices", "drover/gpu/fake", "1/2", "memory=16 GiB", "fake-1: configured unhealthy"} {
		if !strings.Contains(nd, want) {
			t.Errorf("node devices lack %q:\n%s", want, nd)
		}
	}
	if formatNodeDevices(&api.Node{}) != "" {
		t.Error("a node without devices shows a Devices section")
	}
}
