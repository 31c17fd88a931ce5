package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDeviceManagerConfig(t *testing.T) {
	c := DefaultConfig()
	c.DevMode = true
	if dm := deviceManagerConfig(c, nil); dm != nil {
		t.Fatalf("no device plugin block, got a device manager config %+v", dm)
	}
	c.Plugins = map[string]*PluginConfig{
		"fake_device": {Name: "fake_device", Config: json.RawMessage(`{"instances":["a"]}`)},
		"nvidia":      {Name: "nvidia"},
		"raw_exec":    {Name: "raw_exec", Config: json.RawMessage(`{"enabled":true}`)},
	}
	drivers, err := driverManagerConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	dm := deviceManagerConfig(c, drivers)
	if dm == nil || string(dm.PluginConfigs["fake_device"]) != `{"instances":["a"]}` || string(dm.PluginConfigs["nvidia"]) != `{}` {
		t.Fatalf("device plugin configs = %+v", dm)
	}
	if _, ok := dm.PluginConfigs["raw_exec"]; ok {
		t.Error("raw_exec handed to the device manager")
	}
	if _, ok := drivers.PluginConfigs["fake_device"]; ok {
		t.Error("fake_device left to the driver manager")
	}
	if _, ok := drivers.PluginConfigs["raw_exec"]; !ok {
		t.Error("raw_exec taken from the driver manager")
	}
}

// TestNewAgentBadDevicePluginConfig: an invalid device plugin block stops
// the agent at start with an error naming the plugin and the field.
func TestNewAgentBadDevicePluginConfig(t *testing.T) {
	cfg := persistentConfig(t.TempDir(), true, true)
	cfg.Plugins["fake_device"] = &PluginConfig{Name: "fake_device", Config: json.RawMessage(`{"instancez": ["a"]}`)}
	a, err := NewAgent(cfg, discardLogger())
	if err == nil {
		_ = a.Shutdown()
		t.Fatal("NewAgent accepted an unknown fake_device config field")
	}
	if want := `plugin "fake_device": config field "instancez"`; !strings.Contains(err.Error(), want) {
		t.Fatalf("NewAgent error = %q, want it to contain %q", err, want)
	}
}
