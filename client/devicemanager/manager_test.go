package devicemanager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/devices/fake"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/devicetest"
	"github.com/drover-io/drover/structs"
)

// fakeClock hands out After channels the test fires by duration.
type fakeClock struct {
	mu    sync.Mutex
	waits []fakeWait
}

type fakeWait struct {
	d  time.Duration
	ch chan time.Time
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.waits = append(c.waits, fakeWait{d, ch})
	c.mu.Unlock()
	return ch
}

// pending reports how many waits of d are pending.
func (c *fakeClock) pending(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.waits {
		if w.d == d {
			n++
		}
	}
	return n
}

// fire releases every pending wait of d.
func (c *fakeClock) fire(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.waits[:0]
	for _, w := range c.waits {
		if w.d == d {
			w.ch <- time.Time{}
			continue
		}
		kept = append(kept, w)
	}
	c.waits = kept
}

// settle waits until every other goroutine of the test's synctest bubble
// is durably blocked (synctest.Wait: the manager and its plugins have done
// all they can without time passing), then requires cond.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("the manager settled without %s", what)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// nodeRecorder keeps the latest device list handed to UpdateNode.
type nodeRecorder struct {
	mu      sync.Mutex
	devices []*structs.NodeDeviceResource
	calls   int
	changed chan struct{} // closed (and replaced) at each update; nil: none yet
}

func (r *nodeRecorder) update(d []*structs.NodeDeviceResource) {
	r.mu.Lock()
	r.devices, r.calls = d, r.calls+1
	if r.changed != nil {
		close(r.changed)
	}
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// wait waits until cond holds, re-checking it at each update of the node
// (an event, not a poll), for a test outside a synctest bubble.
func (r *nodeRecorder) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	bound := time.NewTimer(time.Minute) // a bound for a hung test only
	defer bound.Stop()
	for {
		r.mu.Lock()
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		changed := r.changed
		r.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-bound.C:
			t.Fatalf("no %s after a minute", what)
		}
	}
}

// healthy returns "id:healthy" for every instance of the latest list.
func (r *nodeRecorder) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, g := range r.devices {
		for _, d := range g.Instances {
			h := "healthy"
			if !d.Healthy {
				h = "unhealthy"
			}
			parts = append(parts, g.ID().String()+"#"+d.ID+":"+h)
		}
	}
	return strings.Join(parts, ",")
}

const (
	fpTimeout   = 7 * time.Second
	restartBase = 10 * time.Millisecond
)

type harness struct {
	m     *Manager
	clock *fakeClock
	node  *nodeRecorder
	logs  *syncBuf
}

func newHarness(t *testing.T, catalog map[string]Factory, configs map[string]string) *harness {
	t.Helper()
	h := &harness{clock: &fakeClock{}, node: &nodeRecorder{}, logs: &syncBuf{}}
	pc := map[string]json.RawMessage{}
	for k, v := range configs {
		pc[k] = json.RawMessage(v)
	}
	h.m = New(Config{
		Logger:             slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Catalog:            catalog,
		PluginConfigs:      pc,
		UpdateNode:         h.node.update,
		FingerprintTimeout: fpTimeout,
		RestartBase:        restartBase,
		RestartMax:         40 * time.Millisecond,
		CallTimeout:        200 * time.Millisecond,
		StatsInterval:      time.Hour,
		After:              h.clock.After,
	})
	t.Cleanup(h.m.Shutdown)
	return h
}

func fakeFactory(logger *slog.Logger) (device.DevicePlugin, error) { return fake.New(logger), nil }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestFakePluginHappyPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]Factory{fake.PluginName: fakeFactory, "nvidia": fakeFactory},
			map[string]string{fake.PluginName: `{"instances":["g0","g1"],"unhealthy":["g1"],"attributes":{"memory":"16 GiB"}}`})
		if err := h.m.Start(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if got, want := h.node.summary(), "drover/gpu/fake#g0:healthy,drover/gpu/fake#g1:unhealthy"; got != want {
			t.Fatalf("node devices = %s, want %s", got, want)
		}
		devs := h.m.Devices()
		if m := devs[0].Attributes["memory"]; m == nil || *m.Int != 16 || m.Unit != "GiB" {
			t.Fatalf("memory attribute = %#v", m)
		}
		r, err := h.m.Reserve(testCtx(t), &structs.AllocatedDeviceResource{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{"g0"}})
		if err != nil || r.Envs["FAKE_VISIBLE_DEVICES"] != "g0" {
			t.Fatalf("Reserve = %+v, %v", r, err)
		}
		// The plugin's first sample may beat its fingerprint and be dropped
		// (stats of devices not known yet): the next comes an interval later.
		time.Sleep(time.Hour) // the harness's StatsInterval (fake time)
		settle(t, "stats", func() bool { return len(h.m.AllStats()) == 1 })
		st := h.m.InstanceStats(&structs.AllocatedDeviceResource{Vendor: "drover", Type: "gpu", Name: "fake", DeviceIDs: []string{"g0"}})
		if st == nil || len(st.InstanceStats) != 1 || st.InstanceStats["g0"] == nil {
			t.Fatalf("InstanceStats = %+v", st)
		}
	})
}

func TestConfigErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]Factory{fake.PluginName: fakeFactory},
			map[string]string{fake.PluginName: `{"instancez":["g0"]}`})
		err := h.m.Start(testCtx(t))
		if err == nil || !strings.Contains(err.Error(), `plugin "fake_device": config field "instancez"`) {
			t.Fatalf("Start = %v", err)
		}
	})
}

func TestUnknownAndBadReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := devicetest.NewPlugin("mock_device")
		var calls atomic.Int32
		p.ReserveFn = func(ctx context.Context, ids []string) (*device.ContainerReservation, error) {
			calls.Add(1)
			switch ids[0] {
			case "hang":
				<-ctx.Done()
				return nil, ctx.Err()
			case "bad":
				return &device.ContainerReservation{Devices: []*device.DeviceSpec{{TaskPath: "/dev/x"}}}, nil
			}
			return &device.ContainerReservation{}, nil
		}
		h := newHarness(t, map[string]Factory{"mock": func(*slog.Logger) (device.DevicePlugin, error) {
			c, _ := devicetest.Serve(t, p)
			return c, nil
		}}, map[string]string{"mock": `{}`})
		go func() {
			p.FingerprintCh <- &device.FingerprintResponse{Devices: []*device.DeviceGroup{{Vendor: "v", Type: "t", Name: "n",
				Devices: []*device.Device{{ID: "ok", Healthy: true}, {ID: "bad", Healthy: true}, {ID: "hang", Healthy: true}}}}}
		}()
		if err := h.m.Start(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		req := func(ids ...string) *structs.AllocatedDeviceResource {
			return &structs.AllocatedDeviceResource{Vendor: "v", Type: "t", Name: "n", DeviceIDs: ids}
		}
		if _, err := h.m.Reserve(testCtx(t), req("ok", "ghost")); !errors.Is(err, device.ErrUnknownDevice) || !strings.Contains(err.Error(), "ghost") {
			t.Fatalf("Reserve(ghost) = %v", err)
		}
		if _, err := h.m.Reserve(testCtx(t), &structs.AllocatedDeviceResource{Vendor: "v", Type: "t", Name: "other", DeviceIDs: []string{"ok"}}); !errors.Is(err, device.ErrUnknownDevice) {
			t.Fatalf("Reserve(wrong group) = %v", err)
		}
		if calls.Load() != 0 {
			t.Fatalf("unknown IDs reached the plugin (%d calls)", calls.Load())
		}
		if _, err := h.m.Reserve(testCtx(t), req("bad")); err == nil || !strings.Contains(err.Error(), "invalid reservation") {
			t.Fatalf("Reserve(bad) = %v", err)
		}
		if !strings.Contains(h.logs.String(), "rejected invalid reservation") {
			t.Fatalf("no log of the bad reservation: %s", h.logs.String())
		}
		if _, err := h.m.Reserve(testCtx(t), req("hang")); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Reserve(hang) = %v", err)
		}
		if _, err := h.m.Reserve(testCtx(t), req("ok")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestInvalidFingerprintAndStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := devicetest.NewPlugin("mock_device")
		h := newHarness(t, map[string]Factory{"mock": func(*slog.Logger) (device.DevicePlugin, error) { return p, nil }},
			map[string]string{"mock": `{}`})
		go func() {
			p.FingerprintCh <- &device.FingerprintResponse{Devices: []*device.DeviceGroup{{Type: "t", Name: "n",
				Devices: []*device.Device{{ID: "a"}}}}}
		}()
		if err := h.m.Start(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if len(h.m.Devices()) != 0 || !strings.Contains(h.logs.String(), "empty vendor, type or name") {
			t.Fatalf("invalid fingerprint not rejected: devices %v, logs %s", h.m.Devices(), h.logs.String())
		}
		p.FingerprintCh <- &device.FingerprintResponse{Devices: []*device.DeviceGroup{{Vendor: "v", Type: "t", Name: "n",
			Devices: []*device.Device{{ID: "a", Healthy: true}, {ID: "a", Healthy: true}}}}}
		settle(t, "duplicate rejected", func() bool { return strings.Contains(h.logs.String(), `duplicate device ID \"a\"`) })
		if len(h.m.Devices()) != 0 {
			t.Fatalf("duplicate IDs accepted: %v", h.m.Devices())
		}
		p.FingerprintCh <- &device.FingerprintResponse{Devices: []*device.DeviceGroup{{Vendor: "v", Type: "t", Name: "n",
			Devices: []*device.Device{{ID: "a", Healthy: true}}}}}
		settle(t, "valid fingerprint", func() bool { return h.node.summary() == "v/t/n#a:healthy" })

		v := 1.0
		st := &device.DeviceStats{Summary: &device.StatValue{FloatNumeratorVal: &v}}
		p.StatsCh <- &device.StatsResponse{Groups: []*device.DeviceGroupStats{{Vendor: "v", Type: "t", Name: "n",
			InstanceStats: map[string]*device.DeviceStats{"a": st, "ghost": st}}}}
		settle(t, "stats", func() bool { return len(h.m.AllStats()) == 1 })
		all := h.m.AllStats()
		if len(all[0].InstanceStats) != 1 || all[0].InstanceStats["ghost"] != nil {
			t.Fatalf("stats of a device that does not exist passed on: %+v", all[0].InstanceStats)
		}
		if !strings.Contains(h.logs.String(), "dropped invalid stats") || !strings.Contains(h.logs.String(), "ghost") {
			t.Fatalf("no logged reason for dropped stats: %s", h.logs.String())
		}
	})
}

// TestCrashRestartsWithBackoff runs a plugin over gRPC that dies: its
// devices turn unhealthy, it is restarted after the backoff and fingerprints
// healthy again.
func TestCrashRestartsWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var plugins []*devicetest.Plugin
		var stops []func()
		h := newHarness(t, map[string]Factory{"mock": func(*slog.Logger) (device.DevicePlugin, error) {
			p := devicetest.NewPlugin("mock_device")
			c, stop := devicetest.Serve(t, p)
			mu.Lock()
			plugins, stops = append(plugins, p), append(stops, stop)
			mu.Unlock()
			return c, nil
		}}, map[string]string{"mock": `{}`})
		current := func(i int) (*devicetest.Plugin, func()) {
			settle(t, "plugin started", func() bool { mu.Lock(); defer mu.Unlock(); return len(plugins) > i })
			mu.Lock()
			defer mu.Unlock()
			return plugins[i], stops[i]
		}
		fp := &device.FingerprintResponse{Devices: []*device.DeviceGroup{{Vendor: "v", Type: "t", Name: "n",
			Devices: []*device.Device{{ID: "a", Healthy: true}, {ID: "b", Healthy: true}}}}}
		go func() {
			p, _ := current(0)
			p.FingerprintCh <- fp
		}()
		if err := h.m.Start(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if got := h.node.summary(); got != "v/t/n#a:healthy,v/t/n#b:healthy" {
			t.Fatalf("node = %s", got)
		}
		_, stop := current(0)
		stop() // the plugin process dies
		settle(t, "devices unhealthy", func() bool { return h.node.summary() == "v/t/n#a:unhealthy,v/t/n#b:unhealthy" })
		settle(t, "backoff wait", func() bool { return h.clock.pending(restartBase) == 1 })
		if _, err := h.m.Reserve(testCtx(t), &structs.AllocatedDeviceResource{Vendor: "v", Type: "t", Name: "n", DeviceIDs: []string{"a"}}); err == nil {
			t.Fatal("Reserve succeeded on a dead plugin")
		}
		h.clock.fire(restartBase)
		p, _ := current(1)
		p.FingerprintCh <- fp
		settle(t, "healthy again", func() bool { return h.node.summary() == "v/t/n#a:healthy,v/t/n#b:healthy" })
		if _, err := h.m.Reserve(testCtx(t), &structs.AllocatedDeviceResource{Vendor: "v", Type: "t", Name: "n", DeviceIDs: []string{"a"}}); err != nil {
			t.Fatalf("Reserve after restart: %v", err)
		}
	})
}

// TestHangAndCrashBackoff uses the fake plugin's fail modes in process: a
// hung plugin is failed after FingerprintTimeout, a crashing one at once;
// both are restarted with a doubling, capped delay. It runs on the real
// clock in a synctest bubble, so that the restarts' times are exact.
func TestHangAndCrashBackoff(t *testing.T) {
	for _, tt := range []struct {
		mode  string
		serve time.Duration // how long each instance lasts
	}{{"hang", fpTimeout}, {"crash", 0}} {
		t.Run(tt.mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var starts []time.Time // when each instance was constructed
				factory := func(logger *slog.Logger) (device.DevicePlugin, error) {
					mu.Lock()
					starts = append(starts, time.Now())
					mu.Unlock()
					return fake.New(logger), nil
				}
				logs := &syncBuf{}
				m := New(Config{
					Logger:             slog.New(slog.NewTextHandler(logs, nil)),
					Catalog:            map[string]Factory{fake.PluginName: factory},
					PluginConfigs:      map[string]json.RawMessage{fake.PluginName: json.RawMessage(`{"fail_mode":"` + tt.mode + `"}`)},
					UpdateNode:         func([]*structs.NodeDeviceResource) {},
					FingerprintTimeout: fpTimeout,
					RestartBase:        restartBase,
					RestartMax:         4 * restartBase,
					StatsInterval:      time.Hour,
				})
				t0 := time.Now()
				if err := m.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				if waited := time.Since(t0); waited != tt.serve {
					t.Errorf("Start returned after %s, want %s", waited, tt.serve)
				}
				delays := []time.Duration{restartBase, 2 * restartBase, 4 * restartBase, 4 * restartBase}
				time.Sleep(time.Duration(len(delays)) * (tt.serve + 4*restartBase))
				m.Shutdown()
				mu.Lock()
				defer mu.Unlock()
				if len(starts) <= len(delays) {
					t.Fatalf("%d instances started, want more than %d", len(starts), len(delays))
				}
				for i, want := range delays {
					if got := starts[i+1].Sub(starts[i]); got != tt.serve+want {
						t.Errorf("restart %d came %s after the start before it, want %s", i+1, got, tt.serve+want)
					}
				}
				if !strings.Contains(logs.String(), "device plugin failed; restarting") {
					t.Fatalf("no restart logged: %s", logs.String())
				}
			})
		})
	}
}

func TestBadOutputPluginNeverReachesNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, map[string]Factory{fake.PluginName: fakeFactory},
			map[string]string{fake.PluginName: `{"fail_mode":"bad_output"}`})
		if err := h.m.Start(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if len(h.m.Devices()) != 0 {
			t.Fatalf("bad fingerprint reached the node: %v", h.m.Devices())
		}
		logs := h.logs.String()
		for _, want := range []string{"rejected fingerprint", "empty vendor, type or name", "duplicate device ID"} {
			if !strings.Contains(logs, want) {
				t.Errorf("logs lack %q: %s", want, logs)
			}
		}
	})
}
