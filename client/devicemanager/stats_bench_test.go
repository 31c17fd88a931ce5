package devicemanager

import (
	"fmt"
	"testing"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// BenchmarkInstanceStats looks up the stats of a task holding 2 instances on
// nodes with more and more devices: the cost stays flat, as the lookup is
// indexed by instance ID (the design notes' scan grew with tasks x host
// devices).
func BenchmarkInstanceStats(b *testing.B) {
	for _, hostDevices := range []int{8, 512, 32768} {
		b.Run(fmt.Sprintf("host_devices=%d", hostDevices), func(b *testing.B) {
			m := New(Config{})
			v := 1.0
			for i := range hostDevices {
				id := fmt.Sprintf("dev-%d", i)
				m.instances[id] = instanceRef{plugin: "p", group: "v/t/n"}
				m.stats[id] = &device.DeviceStats{Summary: &device.StatValue{FloatNumeratorVal: &v}}
			}
			req := &structs.AllocatedDeviceResource{Vendor: "v", Type: "t", Name: "n", DeviceIDs: []string{"dev-3", "dev-5"}}
			b.ReportAllocs()
			for b.Loop() {
				if st := m.InstanceStats(req); len(st.InstanceStats) != 2 {
					b.Fatal("wrong stats")
				}
			}
		})
	}
}
