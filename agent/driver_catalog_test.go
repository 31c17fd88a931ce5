package agent

import (
	"encoding/json"
	"log/slog"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDriverManagerConfig(t *testing.T) {
	withPlugins := func(dev bool, plugins map[string]string) *Config {
		c := DefaultConfig()
		c.DevMode = dev
		for name, raw := range plugins {
			if c.Plugins == nil {
				c.Plugins = map[string]*PluginConfig{}
			}
			c.Plugins[name] = &PluginConfig{Name: name, Config: json.RawMessage(raw)}
		}
		return c
	}
	tests := []struct {
		name         string
		cfg          *Config
		want         []string
		wantDisabled []string
	}{
		{"dev", withPlugins(true, nil), []string{"docker", "exec", "mock_driver", "raw_exec"}, nil},
		{"dev, raw_exec disabled", withPlugins(true, map[string]string{"raw_exec": `{"enabled": false}`}),
			[]string{"docker", "exec", "mock_driver"}, []string{"raw_exec"}},
		{"non-dev without plugin blocks", withPlugins(false, nil), []string{"docker", "exec"}, []string{"mock_driver", "raw_exec"}},
		{"non-dev, raw_exec block without enabled", withPlugins(false, map[string]string{"raw_exec": `{}`}),
			[]string{"docker", "exec"}, []string{"mock_driver", "raw_exec"}},
		{"non-dev, raw_exec enabled", withPlugins(false, map[string]string{"raw_exec": `{"enabled": true}`}),
			[]string{"docker", "exec", "raw_exec"}, []string{"mock_driver"}},
		{"non-dev, mock_driver block", withPlugins(false, map[string]string{"mock_driver": `{}`}),
			[]string{"docker", "exec", "mock_driver"}, []string{"raw_exec"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dm, err := driverManagerConfig(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(dm.BuiltIn)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("built-in drivers = %v, want %v", got, tc.want)
			}
			if got := slices.Sorted(maps.Keys(dm.Disabled)); !slices.Equal(got, tc.wantDisabled) {
				t.Errorf("disabled drivers = %v, want %v", got, tc.wantDisabled)
			}
			if reason := dm.Disabled["raw_exec"]; reason != "" && !strings.Contains(reason, `plugin "raw_exec" { config { enabled = true } }`) {
				t.Errorf("raw_exec disabled reason %q does not say how to enable it", reason)
			}
		})
	}
	c := withPlugins(false, nil)
	c.DataDir = "/var/lib/drover"
	if dm, _ := driverManagerConfig(c); dm.PluginDir != filepath.Join("/var/lib/drover", "plugins") {
		t.Errorf("default plugin_dir = %q", dm.PluginDir)
	}
}

func TestBuiltInDriverConfigErrors(t *testing.T) {
	tests := []struct {
		name, driver, config, want string
	}{
		{"exec unknown field", "exec", `{"colour":"red"}`, `plugin "exec": config field "colour": unknown field`},
		{"docker unknown field", "docker", `{"colour":"red"}`, `plugin "docker": config field "colour": unknown field`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dm, err := driverManagerConfig(DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			_, err = dm.BuiltIn[tc.driver](slog.New(slog.DiscardHandler), json.RawMessage(tc.config))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("factory error = %v, want prefix %q", err, tc.want)
			}
		})
	}
}

// TestNewAgentBadPluginConfig: an invalid plugin block stops the agent at
// start with an error naming the plugin and the field.
func TestNewAgentBadPluginConfig(t *testing.T) {
	cfg := persistentConfig(t.TempDir(), true, true)
	cfg.Plugins["raw_exec"] = &PluginConfig{Name: "raw_exec", Config: json.RawMessage(`{"enabled": true, "enabeld": true}`)}
	a, err := NewAgent(cfg, discardLogger())
	if err == nil {
		_ = a.Shutdown()
		t.Fatal("NewAgent accepted an unknown raw_exec config field")
	}
	if want := `plugin "raw_exec": config field "enabeld": unknown field`; !strings.Contains(err.Error(), want) {
		t.Fatalf("NewAgent error = %q, want it to contain %q", err, want)
	}
}

// TestAgentRawExecGating: a non-dev agent without enabled = true has no
// raw_exec driver, and says why to a task asking for it.
func TestAgentRawExecGating(t *testing.T) {
	ta := startAgent(t, persistentConfig(t.TempDir(), true, true))
	node := ta.agent.client.Node()
	if _, ok := node.Drivers["raw_exec"]; ok {
		t.Fatalf("node drivers %v include raw_exec", slices.Sorted(maps.Keys(node.Drivers)))
	}
	if _, ok := node.Attributes["driver.raw_exec"]; ok {
		t.Fatal("node has the driver.raw_exec attribute")
	}
	if d := node.Drivers["mock_driver"]; d == nil || !d.Healthy {
		t.Fatalf("mock_driver (configured) = %+v, want healthy", d)
	}
	_, err := ta.agent.client.DriverManager().Dispense("raw_exec")
	if err == nil || !strings.Contains(err.Error(), `enable it in the agent config with plugin "raw_exec" { config { enabled = true } }`) {
		t.Fatalf("Dispense(raw_exec) = %v, want the disabled reason", err)
	}
}

// TestDriverManagerConfigClientOptions: driver.allowlist and
// driver.denylist switch drivers off (with the reason Dispense gives), and
// the legacy driver.raw_exec.enable option enables raw_exec.
func TestDriverManagerConfigClientOptions(t *testing.T) {
	tests := []struct {
		name         string
		dev          bool
		options      map[string]string
		plugins      map[string]string
		want         []string
		wantDisabled map[string]string // name -> part of the reason
		wantAllow    []string
	}{
		{name: "allowlist", dev: true, options: map[string]string{"driver.allowlist": "raw_exec, exec"},
			want: []string{"exec", "raw_exec"}, wantAllow: []string{"raw_exec", "exec"},
			wantDisabled: map[string]string{"docker": "driver.allowlist (raw_exec,exec) leaves it out", "mock_driver": "driver.allowlist"}},
		{name: "denylist", dev: true, options: map[string]string{"driver.denylist": "docker,raw_exec"},
			want: []string{"exec", "mock_driver"}, wantDisabled: map[string]string{"docker": "driver.denylist (docker,raw_exec) names it", "raw_exec": "driver.denylist"}},
		{name: "denylist wins over allowlist", dev: true, options: map[string]string{"driver.allowlist": "exec,docker", "driver.denylist": "docker"},
			want: []string{"exec"}, wantAllow: []string{"exec", "docker"},
			wantDisabled: map[string]string{"docker": "denylist", "mock_driver": "allowlist", "raw_exec": "allowlist"}},
		{name: "denylist of an external driver", options: map[string]string{"driver.denylist": "podman"},
			want: []string{"docker", "exec"}, wantDisabled: map[string]string{"podman": "denylist", "raw_exec": "isolation", "mock_driver": "tests"}},
		{name: "driver.raw_exec.enable", options: map[string]string{"driver.raw_exec.enable": "true"},
			want: []string{"docker", "exec", "raw_exec"}, wantDisabled: map[string]string{"mock_driver": "tests"}},
		{name: "the plugin block wins over driver.raw_exec.enable", options: map[string]string{"driver.raw_exec.enable": "true"},
			plugins: map[string]string{"raw_exec": `{"enabled": false}`},
			want:    []string{"docker", "exec"}, wantDisabled: map[string]string{"mock_driver": "tests", "raw_exec": "isolation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.DevMode = tc.dev
			c.Client.Options = tc.options
			for name, raw := range tc.plugins {
				if c.Plugins == nil {
					c.Plugins = map[string]*PluginConfig{}
				}
				c.Plugins[name] = &PluginConfig{Name: name, Config: json.RawMessage(raw)}
			}
			dm, err := driverManagerConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(dm.BuiltIn)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("built-in drivers = %v, want %v", got, tc.want)
			}
			if got, want := slices.Sorted(maps.Keys(dm.Disabled)), slices.Sorted(maps.Keys(tc.wantDisabled)); !reflect.DeepEqual(got, want) {
				t.Errorf("disabled = %v, want %v", got, want)
			}
			for name, part := range tc.wantDisabled {
				if !strings.Contains(dm.Disabled[name], part) {
					t.Errorf("%s disabled because %q, want it to say %q", name, dm.Disabled[name], part)
				}
			}
			if !slices.Equal(dm.Allowlist, tc.wantAllow) {
				t.Errorf("allowlist = %v, want %v", dm.Allowlist, tc.wantAllow)
			}
		})
	}
}
