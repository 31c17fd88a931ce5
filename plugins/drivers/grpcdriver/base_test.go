package grpcdriver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
)

// configurable is the mock driver as a full drivers.Plugin that records
// the config it is given.
type configurable struct {
	*mock.Driver

	mu  sync.Mutex // guards the field below
	cfg *base.Config
}

var _ drivers.Plugin = (*configurable)(nil)

func (c *configurable) PluginInfo(context.Context) (*base.PluginInfo, error) {
	return &base.PluginInfo{Type: base.PluginTypeDriver, PluginAPIVersions: []string{drivers.APIVersion},
		PluginVersion: "0.1.0", Name: "configurable"}, nil
}

func (c *configurable) ConfigSchema(context.Context) (*base.Schema, error) {
	return &base.Schema{Fields: []*base.Field{{Name: "volumes", Type: base.TypeBool, Default: json.RawMessage(`true`)}}}, nil
}

func (c *configurable) SetConfig(_ context.Context, cfg *base.Config) error {
	var conf struct {
		Volumes bool `json:"volumes"`
	}
	if err := cfg.DecodePluginConfig(&conf); err != nil {
		return err
	}
	c.mu.Lock()
	c.cfg = cfg
	c.mu.Unlock()
	return nil
}

func TestBasePlugin(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	impl := &configurable{Driver: d}
	c, _ := serve(t, impl)
	ctx := context.Background()

	info, err := c.PluginInfo(ctx)
	if err != nil || info.Name != "configurable" || info.PluginVersion != "0.1.0" {
		t.Fatalf("PluginInfo = %+v, %v", info, err)
	}
	if c.Name() != "configurable" {
		t.Fatalf("Name = %q", c.Name())
	}
	schema, err := c.ConfigSchema(ctx)
	if err != nil || len(schema.Fields) != 1 || string(schema.Fields[0].Default) != "true" {
		t.Fatalf("ConfigSchema = %+v, %v", schema, err)
	}
	port := 0
	want := &base.Config{PluginConfig: json.RawMessage(`{"volumes":false}`),
		AgentConfig: &base.AgentConfig{NodeID: "n1", DataDir: "/var/lib/drover", ClientMinPort: &port}}
	if err := c.SetConfig(ctx, want); err != nil {
		t.Fatal(err)
	}
	impl.mu.Lock()
	got := impl.cfg
	impl.mu.Unlock()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plugin got config %#v, want %#v", got, want)
	}
	if err := c.SetConfig(ctx, &base.Config{PluginConfig: json.RawMessage(`{"volumez":1}`)}); err == nil {
		t.Fatal("SetConfig with an unknown field succeeded")
	}
}

// TestBasePlugin_Defaults: a driver that is not a base.BasePlugin is
// described by its name and takes any config.
func TestBasePlugin_Defaults(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	c, _ := serve(t, d)
	ctx := context.Background()
	info, err := c.PluginInfo(ctx)
	want := &base.PluginInfo{Type: base.PluginTypeDriver, PluginAPIVersions: []string{drivers.APIVersion}, Name: mock.Name}
	if err != nil || !reflect.DeepEqual(info, want) {
		t.Fatalf("PluginInfo = %+v, %v; want %+v", info, err, want)
	}
	if s, err := c.ConfigSchema(ctx); err != nil || len(s.Fields) != 0 {
		t.Fatalf("ConfigSchema = %+v, %v", s, err)
	}
	if err := c.SetConfig(ctx, &base.Config{PluginConfig: json.RawMessage(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
}

// TestCancelPropagates: cancelling a call's context ends it at once on
// both sides, with an error of kind context.Canceled.
func TestCancelPropagates(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	c, _ := serve(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.StartTask(ctx, &drivers.TaskConfig{ID: "a/web/1", Name: "web",
			RawConfig: json.RawMessage(`{"start_block_for":"1h"}`)})
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("StartTask err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled StartTask did not return")
	}
	// The driver's StartTask saw the cancellation too: no task was made.
	if _, err := d.InspectTask(context.Background(), "a/web/1"); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("task exists after a cancelled start: %v", err)
	}
}
