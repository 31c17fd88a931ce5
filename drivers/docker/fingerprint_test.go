package docker

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// TestFingerprintChanges checks that a fingerprint is sent again when the
// daemon's health changes, and only then.
func TestFingerprintChanges(t *testing.T) {
	var down, tooNew atomic.Bool
	polled := make(chan struct{}, 1) // signalled, without blocking, on each poll
	mux := http.NewServeMux()
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		select {
		case polled <- struct{}{}:
		default:
		}
		if down.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"message":"daemon is shutting down"}`))
			return
		}
		if tooNew.Load() {
			_, _ = w.Write([]byte(`{"Version":"29.0.0","ApiVersion":"1.52","MinAPIVersion":"1.50","Os":"linux"}`))
			return
		}
		_, _ = w.Write([]byte(`{"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux"}`))
	})
	d, err := New(nil, &Config{Endpoint: fakeDaemon(t, mux), FingerprintPeriod: Duration(10 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	if fp.Health != drivers.HealthStateHealthy || fp.Attributes["driver.docker.version"] != "20.10.24" || fp.Attributes["driver.docker.api_version"] != "1.41" {
		t.Fatalf("first fingerprint = %+v", fp)
	}
	// Unchanged health sends nothing while the daemon is polled.
	for range 4 { // the first may be the poll before the test looked
		select {
		case <-polled:
		case <-time.After(testwait.Bound):
			t.Fatal("the daemon is not polled")
		}
	}
	select {
	case fp := <-ch:
		t.Fatalf("unchanged fingerprint sent again: %+v", fp)
	default:
	}
	down.Store(true)
	if fp := <-ch; fp.Health != drivers.HealthStateUndetected || fp.HealthDescription == "" {
		t.Fatalf("fingerprint after the daemon failed = %+v", fp)
	}
	down.Store(false)
	tooNew.Store(true)
	if fp := <-ch; fp.Health != drivers.HealthStateUnhealthy || !strings.Contains(fp.HealthDescription, "requires API version 1.50") {
		t.Fatalf("fingerprint of a daemon too new = %+v", fp)
	}
	tooNew.Store(false)
	if fp := <-ch; fp.Health != drivers.HealthStateHealthy {
		t.Fatalf("fingerprint after recovery = %+v", fp)
	}
	cancel()
	for range ch {
	}
}
