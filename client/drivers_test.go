package client

import (
	"maps"
	"testing"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/structs"
)

// TestClientNodeUpdatedOnDriverChange: a driver's health change reaches
// the node and, through a new registration, the servers; an undetected
// driver's attributes leave the node.
func TestClientNodeUpdatedOnDriverChange(t *testing.T) {
	tc := newTestClient(t, nil, nil, nil, false)
	c, srv := tc.c, tc.srv
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	serverNode := func() *structs.Node {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.nodes[c.NodeID()].Copy()
	}
	srv.wait(t, "registration", func() bool { r, _ := srv.counts(); return r >= 1 })

	tests := []struct {
		name     string
		info     *structs.DriverInfo
		wantAttr string
	}{
		{"unhealthy", &structs.DriverInfo{Detected: true, HealthDescription: "plugin exited: restarting in 1s",
			Attributes: map[string]string{"driver.mock_driver": "1", "driver.mock_driver.version": "2"}}, "1"},
		{"undetected", &structs.DriverInfo{HealthDescription: "gone"}, ""},
		{"healthy again", &structs.DriverInfo{Detected: true, Healthy: true,
			Attributes: map[string]string{"driver.mock_driver": "1"}}, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.UpdateNodeFromDriver(mock.Name, tt.info)
			srv.wait(t, "the servers to get the new driver info", func() bool {
				n := serverNode()
				d := n.Drivers[mock.Name]
				return d != nil && d.HealthDescription == tt.info.HealthDescription && d.Healthy == tt.info.Healthy
			})
			n := serverNode()
			if got := n.Attributes["driver.mock_driver"]; got != tt.wantAttr {
				t.Errorf("attribute driver.mock_driver = %q, want %q", got, tt.wantAttr)
			}
			if _, ok := n.Attributes["driver.mock_driver.version"]; ok != (tt.name == "unhealthy") {
				t.Errorf("attribute driver.mock_driver.version present = %v in %q", ok, tt.name)
			}
		})
	}
}

// TestClientNodeViewCopyOnWrite: the node shared with allocation runners
// (nodeView) is never modified by a later driver or device update; the
// update is in the node handed out after it.
func TestClientNodeViewCopyOnWrite(t *testing.T) {
	c := newTestClient(t, nil, nil, nil, false).c
	before := c.nodeView()
	attrs := maps.Clone(before.Attributes)
	drivers := len(before.Drivers)

	c.UpdateNodeFromDriver("other_driver", &structs.DriverInfo{Detected: true, Healthy: true,
		Attributes: map[string]string{"driver.other_driver": "1"}})
	c.UpdateNodeFromDevices([]*structs.NodeDeviceResource{{Vendor: "v", Type: "gpu", Name: "n"}})

	if !maps.Equal(before.Attributes, attrs) || len(before.Drivers) != drivers {
		t.Errorf("shared node modified: attributes %v (was %v), %d drivers (was %d)",
			before.Attributes, attrs, len(before.Drivers), drivers)
	}
	if before.NodeResources != nil && len(before.NodeResources.Devices) != 0 {
		t.Errorf("shared node got devices %v", before.NodeResources.Devices)
	}
	after := c.nodeView()
	if after.Attributes["driver.other_driver"] != "1" || after.Drivers["other_driver"] == nil {
		t.Errorf("new node lacks the driver update: %v", after.Attributes)
	}
	if after.NodeResources == nil || len(after.NodeResources.Devices) != 1 {
		t.Errorf("new node lacks the device update")
	}
}
