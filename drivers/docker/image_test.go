package docker

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatchProgress: a pull whose progress stops for the activity timeout
// is cancelled; one that keeps reporting is not, however long it takes.
func TestWatchProgress(t *testing.T) {
	const activity = 2 * time.Minute
	t.Run("stalled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, w := io.Pipe()
			go func() {
				_, _ = w.Write([]byte(`{"status":"Pulling fs layer"}` + "\n"))
				// then nothing: the daemon hangs
			}()
			start := time.Now()
			err := watchProgress(r, activity)
			if !errors.Is(err, errNoProgress) || !strings.Contains(err.Error(), "pull_activity_timeout") {
				t.Fatalf("err = %v, want errNoProgress", err)
			}
			if d := time.Since(start); d != activity {
				t.Fatalf("gave up after %s, want %s", d, activity)
			}
			w.Close()
		})
	})
	t.Run("slow but steady", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, w := io.Pipe()
			go func() {
				for range 5 {
					_, _ = w.Write([]byte(`{"status":"Downloading"}` + "\n"))
					time.Sleep(activity - time.Second)
				}
				w.Close()
			}()
			if err := watchProgress(r, activity); err != nil {
				t.Fatalf("err = %v, want a finished pull", err)
			}
		})
	})
	t.Run("error message", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			body := io.NopCloser(strings.NewReader(`{"status":"x"}{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}`))
			if err := watchProgress(body, activity); err == nil || err.Error() != "manifest unknown" {
				t.Fatalf("err = %v", err)
			}
		})
	})
}
