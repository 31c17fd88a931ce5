package fake

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/devicetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func configured(t *testing.T, block string) *Plugin {
	t.Helper()
	p := New(nil, WithClock(func() time.Time { return time.Unix(100, 0) }))
	s, _ := p.ConfigSchema(context.Background())
	raw, err := s.Validate(PluginName, []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetConfig(context.Background(), &base.Config{PluginConfig: raw}); err != nil {
		t.Fatal(err)
	}
	return p
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestFingerprintFromConfig(t *testing.T) {
	p := configured(t, `{"instances":["g0","g1","g2"],"attributes":{"memory":"16 GiB","model":"T4"},"unhealthy":["g2"]}`)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ch, err := p.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	if err := device.ValidateFingerprint(fp.Devices); err != nil {
		t.Fatalf("own fingerprint invalid: %v", err)
	}
	g := fp.Devices[0]
	if g.Vendor != "drover" || g.Type != "gpu" || g.Name != "fake" || len(g.Devices) != 3 {
		t.Fatalf("group = %+v", g)
	}
	if m := g.Attributes["memory"]; m.Int == nil || *m.Int != 16 || m.Unit != "GiB" {
		t.Fatalf("memory attribute = %#v", m)
	}
	if g.Devices[2].Healthy || !g.Devices[0].Healthy {
		t.Fatalf("health = %+v %+v", g.Devices[0], g.Devices[2])
	}
	cancel()
	for range ch {
	}
}

func TestReserveAndStats(t *testing.T) {
	p := configured(t, `{"attributes":{"memory":"4 GiB"}}`)
	// Through the real transport, as an external plugin would be used.
	c, _ := devicetest.Serve(t, p)
	r, err := c.Reserve(testCtx(t), []string{"fake-1", "fake-0"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Envs["FAKE_VISIBLE_DEVICES"]; got != "fake-1,fake-0" {
		t.Fatalf("FAKE_VISIBLE_DEVICES = %q", got)
	}
	if _, err := c.Reserve(testCtx(t), []string{"nope"}); !errors.Is(err, device.ErrUnknownDevice) {
		t.Fatalf("Reserve(nope) = %v", err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ch, err := c.Stats(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	st := <-ch
	s := st.Groups[0].InstanceStats["fake-0"]
	if *s.Summary.FloatNumeratorVal != 50 || *s.Stats.Attributes["memory"].IntNumeratorVal != 1024 || *s.Stats.Attributes["memory"].IntDenominatorVal != 4096 {
		t.Fatalf("stats = %s / %s", s.Summary, s.Stats.Attributes["memory"])
	}
	if !s.Timestamp.Equal(time.Unix(100, 0)) {
		t.Fatalf("timestamp = %v", s.Timestamp)
	}
}

func TestFailModes(t *testing.T) {
	t.Run("crash", func(t *testing.T) {
		p := configured(t, `{"fail_mode":"crash"}`)
		ch, _ := p.Fingerprint(testCtx(t))
		if _, ok := <-ch; ok {
			t.Fatal("crashed plugin sent a fingerprint")
		}
		if _, err := p.Reserve(testCtx(t), []string{"fake-0"}); err == nil {
			t.Fatal("crashed plugin reserved")
		}
	})
	t.Run("hang", func(t *testing.T) {
		p := configured(t, `{"fail_mode":"hang"}`)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := p.Reserve(ctx, []string{"fake-0"}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hung Reserve = %v", err)
		}
		ch, _ := p.Fingerprint(ctx)
		if _, ok := <-ch; ok {
			t.Fatal("hung plugin sent a fingerprint")
		}
	})
	t.Run("bad_output", func(t *testing.T) {
		p := configured(t, `{"fail_mode":"bad_output"}`)
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		ch, _ := p.Fingerprint(ctx)
		fp := <-ch
		err := device.ValidateFingerprint(fp.Devices)
		if err == nil || !strings.Contains(err.Error(), "empty vendor") || !strings.Contains(err.Error(), "duplicate device ID") {
			t.Fatalf("bad fingerprint validates as %v", err)
		}
		r, _ := p.Reserve(ctx, []string{"fake-0"})
		if device.ValidateReservation(r) == nil {
			t.Fatal("bad reservation validates")
		}
		sch, _ := p.Stats(ctx, time.Hour)
		st := <-sch
		_, err = device.FilterStats(st.Groups, map[string]string{"fake-0": "drover/gpu/fake", "fake-1": "drover/gpu/fake"})
		if err == nil || !strings.Contains(err.Error(), `"ghost"`) {
			t.Fatalf("bad stats filter as %v", err)
		}
	})
	t.Run("unknown mode", func(t *testing.T) {
		p := New(nil)
		err := p.SetConfig(context.Background(), &base.Config{PluginConfig: []byte(`{"fail_mode":"explode"}`)})
		var ce *base.ConfigError
		if !errors.As(err, &ce) || ce.Field != "fail_mode" {
			t.Fatalf("SetConfig = %v", err)
		}
	})
}
