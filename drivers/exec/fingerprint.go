package exec

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// defaultFingerprintInterval is how often Fingerprint checks the host
// again.
const defaultFingerprintInterval = 30 * time.Second

// probeTimeout bounds one fingerprint check.
const probeTimeout = 10 * time.Second

// Fingerprint sends the driver's health at once, then again whenever a
// periodic check finds it changed, until ctx is done. The driver is
// healthy when the agent runs as root, cgroups are usable (a cgroup can be
// created and removed) and namespaces work (the init stage starts as PID 1
// of a new pid namespace).
func (d *Driver) Fingerprint(ctx context.Context) (<-chan *drivers.Fingerprint, error) {
	ch := make(chan *drivers.Fingerprint, 1)
	last := d.check(ctx)
	ch <- last
	go func() {
		defer close(ch)
		ticker := time.NewTicker(d.fingerprintInterval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			fp := d.check(ctx)
			if sameFingerprint(fp, last) {
				continue
			}
			last = fp
			select {
			case ch <- fp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// check examines the host once.
func (d *Driver) check(ctx context.Context) *drivers.Fingerprint {
	if uid := d.geteuid(); uid != 0 {
		return &drivers.Fingerprint{
			Health:            drivers.HealthStateUndetected,
			HealthDescription: fmt.Sprintf("the exec driver needs the agent to run as root (it runs as uid %d)", uid),
		}
	}
	unhealthy := func(format string, args ...any) *drivers.Fingerprint {
		return &drivers.Fingerprint{Health: drivers.HealthStateUnhealthy, HealthDescription: fmt.Sprintf(format, args...)}
	}
	layout, err := d.layout()
	if err != nil {
		return unhealthy("exec driver: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cg, err := isolation.NewCgroup(layout, isolation.CgroupConfig{
		Parent: d.opts.CgroupParent,
		Name:   "fingerprint-" + strconv.Itoa(os.Getpid()),
	})
	if err != nil {
		return unhealthy("exec driver: cgroups are not usable: %v", err)
	}
	if err := cg.Destroy(ctx); err != nil {
		return unhealthy("exec driver: cgroups are not usable: %v", err)
	}
	initCmd, err := d.initCommand()
	if err != nil {
		return unhealthy("exec driver: %v", err)
	}
	if err := isolation.Probe(ctx, initCmd); err != nil {
		return unhealthy("exec driver: %v", err)
	}
	// Whether tasks get a user namespace: the plugin's user_namespace
	// and the kernel's leave.
	userNS := d.opts.UserNamespace && d.userNamespaces() == nil
	return &drivers.Fingerprint{
		Attributes: map[string]string{
			"driver." + Name:                     "1",
			"driver." + Name + ".cgroup_version": strconv.Itoa(layout.Version),
			"driver." + Name + ".user_namespace": strconv.FormatBool(userNS),
		},
		Health:            drivers.HealthStateHealthy,
		HealthDescription: "healthy",
	}
}

func sameFingerprint(a, b *drivers.Fingerprint) bool {
	if a.Health != b.Health || a.HealthDescription != b.HealthDescription || len(a.Attributes) != len(b.Attributes) {
		return false
	}
	for k, v := range a.Attributes {
		if bv, ok := b.Attributes[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
