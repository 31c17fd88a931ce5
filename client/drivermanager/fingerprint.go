package drivermanager

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// driverInfo turns a fingerprint into the node's DriverInfo. A detected
// driver's attributes include driver.NAME = "1" and, when the plugin
// reports its version, driver.NAME.version. caps are the instance's
// capabilities (nil: unknown): a driver that cannot mount is reported so
// (MountsUnsupported), for the servers to refuse jobs that mount volumes
// with it.
func driverInfo(name, version string, caps *drivers.Capabilities, fp *drivers.Fingerprint, now time.Time) *structs.DriverInfo {
	info := &structs.DriverInfo{
		Attributes:        maps.Clone(fp.Attributes),
		Detected:          fp.Health != "" && fp.Health != drivers.HealthStateUndetected,
		Healthy:           fp.Health == drivers.HealthStateHealthy,
		HealthDescription: fp.HealthDescription,
		UpdateTime:        now,
		MountsUnsupported: caps != nil && caps.MountConfigs == drivers.MountConfigSupportNone,
	}
	if !info.Detected {
		return info
	}
	if info.Attributes == nil {
		info.Attributes = map[string]string{}
	}
	info.Attributes["driver."+name] = "1"
	if _, ok := info.Attributes["driver."+name+".version"]; !ok && version != "" {
		info.Attributes["driver."+name+".version"] = version
	}
	return info
}

// unhealthyInfo is the DriverInfo of a driver whose plugin is down: still
// detected (its tasks are kept), not healthy.
func unhealthyInfo(prev *structs.DriverInfo, desc string, now time.Time) *structs.DriverInfo {
	info := &structs.DriverInfo{Detected: true, HealthDescription: desc, UpdateTime: now}
	if prev != nil {
		info.Attributes = maps.Clone(prev.Attributes)
		info.MountsUnsupported = prev.MountsUnsupported
	}
	return info
}

// sameInfo reports whether two infos differ only in UpdateTime.
func sameInfo(a, b *structs.DriverInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Detected == b.Detected && a.Healthy == b.Healthy && a.MountsUnsupported == b.MountsUnsupported &&
		a.HealthDescription == b.HealthDescription && maps.Equal(a.Attributes, b.Attributes)
}

func copyInfo(i *structs.DriverInfo) *structs.DriverInfo {
	if i == nil {
		return nil
	}
	c := *i
	c.Attributes = maps.Clone(i.Attributes)
	return &c
}

// report records info as the driver's and hands it to the client when it
// changed.
func (m *Manager) report(md *managedDriver, info *structs.DriverInfo) {
	md.mu.Lock()
	changed := !sameInfo(md.info, info)
	if changed {
		md.info = info
	}
	md.mu.Unlock()
	if changed {
		m.cfg.UpdateNode(md.name, copyInfo(info))
	}
}

// consumeFingerprints reports an instance's fingerprints until ctx is done
// or the stream ends; first is closed after the first one (or when there
// will be none).
func (m *Manager) consumeFingerprints(ctx context.Context, md *managedDriver, inst *instance, first func()) {
	defer first()
	caps := inst.driver.Capabilities()
	ch, err := inst.driver.Fingerprint(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.report(md, &structs.DriverInfo{HealthDescription: fmt.Sprintf("fingerprint failed: %v", err), UpdateTime: m.cfg.Now()})
		}
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case fp, ok := <-ch:
			if !ok {
				return
			}
			if fp == nil {
				continue
			}
			m.report(md, driverInfo(md.name, inst.version, caps, fp, m.cfg.Now()))
			first()
		}
	}
}
