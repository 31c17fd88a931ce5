package drivermanager

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// nodeRecorder records the DriverInfo updates the Manager reports.
type nodeRecorder struct {
	changed chan struct{} // a value after each update, if there is room

	mu    sync.Mutex // guards the field below
	infos map[string][]*structs.DriverInfo
}

func newNodeRecorder() *nodeRecorder {
	return &nodeRecorder{changed: make(chan struct{}, 1)}
}

func (r *nodeRecorder) update(name string, info *structs.DriverInfo) {
	r.mu.Lock()
	if r.infos == nil {
		r.infos = make(map[string][]*structs.DriverInfo)
	}
	r.infos[name] = append(r.infos[name], info)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// await waits until cond holds, looking again after each update. The
// bound only ends a test that hangs: plugins are real processes, and
// nothing here depends on how long they take.
func (r *nodeRecorder) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	bound := time.NewTimer(2 * time.Minute)
	defer bound.Stop()
	for !cond() {
		select {
		case <-r.changed:
		case <-bound.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *nodeRecorder) last(name string) *structs.DriverInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.infos[name]
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}

func (r *nodeRecorder) all(name string) []*structs.DriverInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*structs.DriverInfo(nil), r.infos[name]...)
}

// configurable is the mock driver with a config schema and task events.
type configurable struct {
	*mock.Driver
	mu     sync.Mutex // guards the field below
	config json.RawMessage
	events chan *drivers.TaskEvent
}

func (c *configurable) PluginInfo(context.Context) (*base.PluginInfo, error) {
	return &base.PluginInfo{Type: base.PluginTypeDriver, Name: mock.Name, PluginVersion: "9.9.9",
		PluginAPIVersions: []string{drivers.APIVersion}}, nil
}

func (c *configurable) ConfigSchema(context.Context) (*base.Schema, error) {
	return &base.Schema{Fields: []*base.Field{
		{Name: "enabled", Type: base.TypeBool, Default: json.RawMessage(`false`)},
		{Name: "volumes", Type: base.TypeStringList},
	}}, nil
}

func (c *configurable) SetConfig(_ context.Context, cfg *base.Config) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.config = cfg.PluginConfig
	return nil
}

func (c *configurable) TaskEvents(ctx context.Context) (<-chan *drivers.TaskEvent, error) {
	out := make(chan *drivers.TaskEvent)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-c.events:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

func newConfigurable() *configurable {
	return &configurable{Driver: mock.New(nil), events: make(chan *drivers.TaskEvent)}
}

func startManager(t *testing.T, cfg Config) (*Manager, *nodeRecorder) {
	t.Helper()
	rec := newNodeRecorder()
	cfg.UpdateNode = rec.update
	m := New(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(m.Shutdown)
	return m, rec
}

func TestManager_BuiltInMock(t *testing.T) {
	m, rec := startManager(t, Config{
		BuiltIn:  map[string]Factory{mock.Name: func(l *slog.Logger, _ json.RawMessage) (drivers.DriverPlugin, error) { return mock.New(l), nil }},
		Disabled: map[string]string{"raw_exec": `enable it with plugin "raw_exec" { config { enabled = true } }`},
	})
	info := rec.last(mock.Name)
	if info == nil || !info.Detected || !info.Healthy || info.Attributes["driver.mock_driver"] != "1" {
		t.Fatalf("mock driver info after Start = %+v, want detected, healthy, driver.mock_driver=1", info)
	}
	if got := m.Drivers()[mock.Name]; got == nil || !got.Healthy {
		t.Fatalf("Drivers()[mock_driver] = %+v", got)
	}

	d, err := m.Dispense(mock.Name)
	if err != nil {
		t.Fatalf("Dispense: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := &drivers.TaskConfig{ID: "a1/web/1", Name: "web", AllocID: "a1", RawConfig: json.RawMessage(`{"run_for":"10ms","exit_code":3}`)}
	if _, err := d.StartTask(ctx, cfg); err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	ch, err := d.WaitTask(ctx, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res := <-ch; res == nil || res.ExitCode != 3 {
		t.Fatalf("exit = %+v, want code 3", res)
	}
	if err := d.DestroyTask(ctx, cfg.ID, true); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, driver string
		kind         structs.ErrorKind
		want         string
	}{
		{"unknown", "nope", structs.KindNotFound, `nope`},
		{"disabled", "raw_exec", structs.KindUnavailable, `driver "raw_exec" is disabled: enable it with plugin "raw_exec"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Dispense(tc.driver)
			if err == nil || structs.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Dispense(%q) = %v (kind %v), want kind %v containing %q", tc.driver, err, structs.KindOf(err), tc.kind, tc.want)
			}
		})
	}
	m.Shutdown()
	if _, err := m.Dispense(mock.Name); structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("Dispense after Shutdown = %v, want unavailable", err)
	}
}

func TestManager_PluginConfig(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		wantErr []string
		want    string
	}{
		{name: "no block: defaults", want: `{"enabled":false}`},
		{name: "valid block", config: `{"enabled":true,"volumes":["a"]}`, want: `{"enabled":true,"volumes":["a"]}`},
		{name: "wrong type", config: `{"enabled":"yes"}`, wantErr: []string{`plugin "mock_driver": config field "enabled": want bool`}},
		{name: "unknown field", config: `{"enabeld":true}`, wantErr: []string{`plugin "mock_driver": config field "enabeld": unknown field`}},
		{name: "every problem", config: `{"enabled":1,"volumes":"x"}`, wantErr: []string{`config field "enabled"`, `config field "volumes"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newConfigurable()
			cfg := Config{BuiltIn: map[string]Factory{mock.Name: func(*slog.Logger, json.RawMessage) (drivers.DriverPlugin, error) { return d, nil }}}
			if tc.config != "" {
				cfg.PluginConfigs = map[string]json.RawMessage{mock.Name: json.RawMessage(tc.config)}
			}
			m := New(cfg)
			defer m.Shutdown()
			err := m.Start(context.Background())
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatal("Start: want an error")
				}
				var ce *base.ConfigError
				if !errors.As(err, &ce) {
					t.Errorf("error %v is not a *base.ConfigError", err)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			d.mu.Lock()
			got := string(d.config)
			d.mu.Unlock()
			if got != tc.want {
				t.Fatalf("SetConfig got %s, want %s", got, tc.want)
			}
			if v := m.Drivers()[mock.Name].Attributes["driver.mock_driver.version"]; v != "9.9.9" {
				t.Fatalf("driver.mock_driver.version = %q, want the plugin version", v)
			}
		})
	}
}

func TestManager_TaskEvents(t *testing.T) {
	d := newConfigurable()
	m, _ := startManager(t, Config{BuiltIn: map[string]Factory{mock.Name: func(*slog.Logger, json.RawMessage) (drivers.DriverPlugin, error) { return d, nil }}})
	got := make(chan *drivers.TaskEvent, 2)
	m.RegisterEventHandler(mock.Name, "a1/web/1", func(ev *drivers.TaskEvent) { got <- ev })
	send := func(ev *drivers.TaskEvent) {
		select {
		case d.events <- ev:
		case <-time.After(10 * time.Second):
			t.Fatal("the manager does not read task events")
		}
	}
	send(&drivers.TaskEvent{TaskID: "other", Message: "not routed"})
	send(&drivers.TaskEvent{TaskID: "a1/web/1", Message: "pulling image"})
	select {
	case ev := <-got:
		if ev.Message != "pulling image" {
			t.Fatalf("handler got %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event routed to the handler")
	}
	m.DeregisterEventHandler(mock.Name, "a1/web/1")
	send(&drivers.TaskEvent{TaskID: "a1/web/1", Message: "after deregister"})
	send(&drivers.TaskEvent{TaskID: "flush"}) // the previous event has been routed once this one is read
	if len(got) != 0 {
		t.Fatalf("handler called after deregistration: %+v", <-got)
	}
}

func TestRestartDelay(t *testing.T) {
	c := Config{RestartBase: time.Second, RestartMax: 10 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := c.restartDelay(i + 1); got != w {
			t.Errorf("restartDelay(%d) = %s, want %s", i+1, got, w)
		}
	}
}

// TestManager_FactoryConfigError: a built-in driver that rejects its
// config at construction fails Start with an error naming the plugin.
func TestManager_FactoryConfigError(t *testing.T) {
	m := New(Config{
		BuiltIn: map[string]Factory{"docker": func(_ *slog.Logger, raw json.RawMessage) (drivers.DriverPlugin, error) {
			return nil, errors.New(`config field "pull_timeout": invalid duration "soon"`)
		}},
		PluginConfigs: map[string]json.RawMessage{"docker": json.RawMessage(`{"pull_timeout":"soon"}`)},
	})
	defer m.Shutdown()
	err := m.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), `plugin "docker": config: config field "pull_timeout"`) {
		t.Fatalf("Start = %v, want the factory's error naming the plugin", err)
	}
}
