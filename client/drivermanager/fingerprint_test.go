package drivermanager

import (
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

func TestDriverInfo(t *testing.T) {
	now := time.Unix(100, 0)
	tests := []struct {
		name              string
		fp                *drivers.Fingerprint
		version           string
		detected, healthy bool
		wantAttrs         map[string]string
	}{
		{"healthy", &drivers.Fingerprint{Health: drivers.HealthStateHealthy, Attributes: map[string]string{"driver.x.foo": "1"}},
			"1.2.0", true, true, map[string]string{"driver.x": "1", "driver.x.foo": "1", "driver.x.version": "1.2.0"}},
		{"driver's own version wins", &drivers.Fingerprint{Health: drivers.HealthStateHealthy, Attributes: map[string]string{"driver.x.version": "27"}},
			"1.2.0", true, true, map[string]string{"driver.x": "1", "driver.x.version": "27"}},
		{"unhealthy is detected", &drivers.Fingerprint{Health: drivers.HealthStateUnhealthy, HealthDescription: "broken"},
			"", true, false, map[string]string{"driver.x": "1"}},
		{"undetected", &drivers.Fingerprint{Health: drivers.HealthStateUndetected}, "1", false, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := driverInfo("x", tc.version, nil, tc.fp, now)
			if info.Detected != tc.detected || info.Healthy != tc.healthy || !info.UpdateTime.Equal(now) {
				t.Errorf("info = %+v", info)
			}
			if len(info.Attributes) != len(tc.wantAttrs) {
				t.Fatalf("attributes = %v, want %v", info.Attributes, tc.wantAttrs)
			}
			for k, v := range tc.wantAttrs {
				if info.Attributes[k] != v {
					t.Errorf("attribute %s = %q, want %q", k, info.Attributes[k], v)
				}
			}
		})
	}
}

func TestDriverInfoMounts(t *testing.T) {
	fp := &drivers.Fingerprint{Health: drivers.HealthStateHealthy}
	for _, tc := range []struct {
		caps *drivers.Capabilities
		want bool
	}{
		{nil, false},
		{&drivers.Capabilities{}, false},
		{&drivers.Capabilities{MountConfigs: drivers.MountConfigSupportNone}, true},
	} {
		info := driverInfo("x", "", tc.caps, fp, time.Unix(1, 0))
		if info.MountsUnsupported != tc.want {
			t.Errorf("caps %+v: MountsUnsupported = %v, want %v", tc.caps, info.MountsUnsupported, tc.want)
		}
		if down := unhealthyInfo(info, "down", time.Unix(2, 0)); down.MountsUnsupported != tc.want {
			t.Errorf("caps %+v: an unhealthy driver's MountsUnsupported = %v, want %v", tc.caps, down.MountsUnsupported, tc.want)
		}
	}
	a := driverInfo("x", "", nil, fp, time.Unix(1, 0))
	b := driverInfo("x", "", &drivers.Capabilities{MountConfigs: drivers.MountConfigSupportNone}, fp, time.Unix(1, 0))
	if sameInfo(a, b) {
		t.Error("sameInfo ignores MountsUnsupported: a change would not reach the servers")
	}
}
