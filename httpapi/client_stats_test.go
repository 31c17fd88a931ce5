package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// deviceStatsNodeClient is a fakeNodeClient with device statistics: tasks a
// and b of local-2 share instance g1 of drover/gpu/fake; b also has g2.
type deviceStatsNodeClient struct {
	*fakeNodeClient
}

func statOf(v float64) *device.DeviceStats {
	return &device.DeviceStats{Summary: &device.StatValue{FloatNumeratorVal: &v, Unit: "%", Desc: "utilisation"}}
}

func (deviceStatsNodeClient) TaskDeviceStats(alloc *structs.Allocation) map[string][]*device.DeviceGroupStats {
	if alloc.ID != "local-2" {
		return nil
	}
	g := func(ids ...string) *device.DeviceGroupStats {
		out := &device.DeviceGroupStats{Vendor: "drover", Type: "gpu", Name: "fake", InstanceStats: map[string]*device.DeviceStats{}}
		for _, id := range ids {
			out.InstanceStats[id] = statOf(50)
		}
		return out
	}
	return map[string][]*device.DeviceGroupStats{"a": {g("g1")}, "b": {g("g1", "g2")}}
}

func (deviceStatsNodeClient) HostDeviceStats() []*device.DeviceGroupStats {
	return []*device.DeviceGroupStats{{Vendor: "drover", Type: "gpu", Name: "fake",
		InstanceStats: map[string]*device.DeviceStats{"g0": statOf(0), "g1": statOf(50), "g2": statOf(50)}}}
}

func TestClientStats(t *testing.T) {
	nc := deviceStatsNodeClient{&fakeNodeClient{dirs: map[string]string{}}}
	b := &opsBackend{fakeBackend: &fakeBackend{}, allocs: []*structs.Allocation{testAlloc("local-2", testNodeID, "a", "b")}}
	_, ts := serveAPI(t, b.handlers(), nc)

	code, body, _ := do(t, "GET", ts.URL+"/v1/client/allocation/local-2/stats", "")
	if code != 200 {
		t.Fatalf("alloc stats: %d %s", code, body)
	}
	var usage api.AllocResourceUsage
	if err := json.Unmarshal([]byte(body), &usage); err != nil {
		t.Fatal(err)
	}
	if n := len(usage.Tasks["a"].ResourceUsage.DeviceStats[0].InstanceStats); n != 1 {
		t.Errorf("task a has %d instances, want 1", n)
	}
	if n := len(usage.Tasks["b"].ResourceUsage.DeviceStats[0].InstanceStats); n != 2 {
		t.Errorf("task b has %d instances, want 2", n)
	}
	agg := usage.ResourceUsage.DeviceStats
	if len(agg) != 1 || len(agg[0].InstanceStats) != 2 || agg[0].ID() != "drover/gpu/fake" {
		t.Fatalf("aggregate device stats = %s: the shared instance must be counted once, in one group", body)
	}
	if s := agg[0].InstanceStats["g1"].Summary.String(); s != "50.00 %" {
		t.Errorf("summary = %q", s)
	}

	code, body, _ = do(t, "GET", ts.URL+"/v1/client/stats", "")
	if code != 200 {
		t.Fatalf("host stats: %d %s", code, body)
	}
	var host api.HostStats
	if err := json.Unmarshal([]byte(body), &host); err != nil {
		t.Fatal(err)
	}
	if len(host.DeviceStats) != 1 || len(host.DeviceStats[0].InstanceStats) != 3 || host.Timestamp == 0 {
		t.Fatalf("host stats = %s", body)
	}
}
