package devicemanager

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// shutdowner is implemented by plugins that hold resources (the nvidia
// plugin's NVML handle) to release when the Manager drops them.
type shutdowner interface{ Shutdown() }

// supervise runs plugin mp (first is its configured first instance) until
// the Manager stops, restarting it with backoff whenever it fails.
func (m *Manager) supervise(mp *managedPlugin, first device.DevicePlugin) {
	logger := m.logger.With("plugin", mp.name)
	p := first
	failures := 0
	for {
		started := m.cfg.Now()
		var reason string
		if p != nil {
			m.setPlugin(mp, p)
			reason = m.serve(mp, p)
			if s, ok := p.(shutdowner); ok {
				s.Shutdown()
			}
		}
		if m.ctx.Err() != nil {
			return
		}
		if p == nil {
			reason = "device plugin could not be restarted"
		}
		m.fail(mp, reason)
		if m.cfg.Now().Sub(started) >= restartResetAfter {
			failures = 0
		}
		failures++
		delay := m.cfg.restartDelay(failures)
		logger.Warn("device plugin failed; restarting", "reason", reason, "attempt", failures, "delay", delay)
		if !m.waitOrDone(delay) {
			return
		}
		var err error
		if p, err = m.newPlugin(m.ctx, mp.name); err != nil {
			logger.Warn("device plugin restart failed", "error", err)
			p = nil
		}
	}
}

// setPlugin makes p mp's current plugin.
func (m *Manager) setPlugin(mp *managedPlugin, p device.DevicePlugin) {
	m.mu.Lock()
	mp.plugin = p
	m.mu.Unlock()
}

// fail marks mp's devices unhealthy for reason and tells the node.
func (m *Manager) fail(mp *managedPlugin, reason string) {
	m.mu.Lock()
	mp.plugin = nil
	mp.failure = "device plugin " + mp.name + " failed: " + reason
	for id, ref := range m.instances {
		if ref.plugin == mp.name {
			delete(m.stats, id)
		}
	}
	m.mu.Unlock()
	mp.markReady()
	m.updateNode()
}

// serve consumes p's fingerprint and stats streams until the Manager stops
// (it returns "") or p fails (it returns why).
func (m *Manager) serve(mp *managedPlugin, p device.DevicePlugin) string {
	ctx, cancel := context.WithCancel(m.ctx)
	defer cancel()
	logger := m.logger.With("plugin", mp.name)
	fpCh, err := p.Fingerprint(ctx)
	if err != nil {
		return fmt.Sprintf("fingerprint: %v", err)
	}
	statsCh, err := p.Stats(ctx, m.cfg.StatsInterval)
	if err != nil {
		logger.Warn("device plugin refused stats; its devices will have none", "error", err)
		statsCh = nil
	}
	timeout := m.cfg.After(m.cfg.FingerprintTimeout)
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-timeout:
			return fmt.Sprintf("no fingerprint within %s", m.cfg.FingerprintTimeout)
		case fp, ok := <-fpCh:
			if !ok {
				if ctx.Err() != nil {
					return ""
				}
				return "fingerprint stream ended"
			}
			timeout = nil
			m.applyFingerprint(mp, fp)
		case st, ok := <-statsCh:
			if !ok {
				if ctx.Err() == nil {
					logger.Warn("device plugin ended its stats stream")
				}
				statsCh = nil
				continue
			}
			m.applyStats(mp, st)
		}
	}
}

// applyFingerprint validates fp and, if it is sound, makes it mp's devices.
// An invalid fingerprint is rejected whole: the previous devices stay.
func (m *Manager) applyFingerprint(mp *managedPlugin, fp *device.FingerprintResponse) {
	defer mp.markReady()
	logger := m.logger.With("plugin", mp.name)
	if fp == nil {
		logger.Warn("rejected fingerprint from device plugin", "reason", "empty response")
		return
	}
	if fp.Error != nil {
		logger.Warn("device plugin cannot detect its devices", "error", fp.Error)
		m.mu.Lock()
		mp.failure = "device plugin " + mp.name + ": " + fp.Error.Error()
		m.mu.Unlock()
		m.updateNode()
		return
	}
	if err := device.ValidateFingerprint(fp.Devices); err != nil {
		logger.Warn("rejected fingerprint from device plugin", "reason", err)
		return
	}
	devices := nodeDevices(fp.Devices)
	m.mu.Lock()
	if err := m.conflictLocked(mp.name, devices); err != nil {
		m.mu.Unlock()
		logger.Warn("rejected fingerprint from device plugin", "reason", err)
		return
	}
	for id, ref := range m.instances {
		if ref.plugin == mp.name {
			delete(m.instances, id)
		}
	}
	for _, g := range devices {
		for _, d := range g.Instances {
			m.instances[d.ID] = instanceRef{plugin: mp.name, group: g.ID().String()}
		}
	}
	for id := range m.stats {
		if _, ok := m.instances[id]; !ok {
			delete(m.stats, id)
		}
	}
	changed := mp.failure != "" || !sameDevices(mp.devices, devices)
	mp.devices, mp.failure = devices, ""
	m.mu.Unlock()
	if changed {
		m.updateNode()
	}
}

// conflictLocked reports device IDs or groups of devices that another
// plugin already provides.
func (m *Manager) conflictLocked(name string, devices []*structs.NodeDeviceResource) error {
	groups := map[string]string{}
	for _, mp := range m.plugins {
		if mp.name == name {
			continue
		}
		for _, g := range mp.devices {
			groups[g.ID().String()] = mp.name
		}
	}
	for _, g := range devices {
		if other, ok := groups[g.ID().String()]; ok {
			return fmt.Errorf("device group %q is already provided by device plugin %q", g.ID(), other)
		}
		for _, d := range g.Instances {
			if ref, ok := m.instances[d.ID]; ok && ref.plugin != name {
				return fmt.Errorf("device ID %q is already provided by device plugin %q", d.ID, ref.plugin)
			}
		}
	}
	return nil
}
