package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// fingerprintTimeout bounds one health check of the daemon.
const fingerprintTimeout = 5 * time.Second

// Fingerprint sends the driver's health at once and again whenever it
// changes, checking the daemon every FingerprintPeriod. The channel closes
// when ctx is done.
func (d *Driver) Fingerprint(ctx context.Context) (<-chan *drivers.Fingerprint, error) {
	ch := make(chan *drivers.Fingerprint, 1)
	go func() {
		defer close(ch)
		var last *drivers.Fingerprint
		ticker := time.NewTicker(time.Duration(d.config.FingerprintPeriod))
		defer ticker.Stop()
		for {
			fp := d.fingerprint(ctx)
			if ctx.Err() != nil {
				return
			}
			if last == nil || !sameFingerprint(last, fp) {
				select {
				case ch <- fp:
				case <-ctx.Done():
					return
				}
				last = fp
			}
			select {
			case <-ticker.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// fingerprint checks the daemon once.
func (d *Driver) fingerprint(ctx context.Context) *drivers.Fingerprint {
	ctx, cancel := context.WithTimeout(ctx, fingerprintTimeout)
	defer cancel()
	v, err := d.client.serverVersion(ctx)
	if errors.Is(err, errUnsupportedAPI) {
		return &drivers.Fingerprint{
			Health:            drivers.HealthStateUnhealthy,
			HealthDescription: fmt.Sprintf("Docker daemon at %s is not supported: %v", d.config.Endpoint, err),
			Attributes:        map[string]string{},
		}
	}
	if err != nil {
		return &drivers.Fingerprint{
			Health:            drivers.HealthStateUndetected,
			HealthDescription: fmt.Sprintf("Docker daemon unreachable at %s: %v", d.config.Endpoint, err),
			Attributes:        map[string]string{},
		}
	}
	ver, _ := d.client.apiVersion(ctx)
	return &drivers.Fingerprint{
		Health:            drivers.HealthStateHealthy,
		HealthDescription: "healthy",
		Attributes: map[string]string{
			"driver." + Name:                     "1",
			"driver.docker.version":              v.Version,
			"driver.docker.os_type":              v.Os,
			"driver.docker.api_version":          ver,
			"driver.docker.volumes.enabled":      strconv.FormatBool(d.config.volumesEnabled()),
			"driver.docker.privileged.enabled":   strconv.FormatBool(d.config.AllowPrivileged),
			"driver.docker.default_network_mode": d.config.DefaultNetworkMode,
		},
	}
}

func sameFingerprint(a, b *drivers.Fingerprint) bool {
	return a.Health == b.Health && a.HealthDescription == b.HealthDescription && maps.Equal(a.Attributes, b.Attributes)
}
