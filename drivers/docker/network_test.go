package docker

import (
	"strings"
	"testing"

	"github.com/drover-io/drover/plugins/drivers"
)

// The group's network mode becomes the container's when the task sets no
// network_mode; without either, the plugin's default applies.
func TestNetworkMode(t *testing.T) {
	cases := []struct {
		name, task, group, pluginDefault, want string
		publishes                              bool
	}{
		{name: "plugin default", pluginDefault: "none", want: "none"},
		{name: "plugin default bridge", pluginDefault: "bridge", want: "bridge"},
		{name: "group none", group: "none", pluginDefault: "bridge", want: "none"},
		{name: "group host", group: "host", pluginDefault: "none", want: "host"},
		{name: "task wins over group", task: "bridge", group: "none", pluginDefault: "none", want: "bridge"},
		{name: "task host wins over group none", task: "host", group: "none", pluginDefault: "none", want: "host"},
		{name: "group host publishing ports keeps the default", group: "host", pluginDefault: "default", publishes: true, want: "default"},
		{name: "group none publishing ports stays none", group: "none", pluginDefault: "default", publishes: true, want: "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := networkMode(tc.task, tc.group, tc.pluginDefault, tc.publishes); got != tc.want {
				t.Errorf("networkMode(%q, %q, %q) = %q, want %q", tc.task, tc.group, tc.pluginDefault, got, tc.want)
			}
		})
	}
}

// buildSpec takes the group's mode from the TaskConfig.
func TestBuildSpecGroupNetworkMode(t *testing.T) {
	plugin := &Config{}
	plugin.setDefaults()
	for _, mode := range []string{"none", "host"} {
		cfg := specConfig(`{"image":"busybox"}`)
		cfg.NetworkMode = mode
		env := containerEnv(cfg.Env)
		conf, err := decodeTaskConfig(cfg, env)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := buildSpec(cfg, conf, env, specInput{plugin: plugin, cpuMHz: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if string(spec.HostConfig.NetworkMode) != mode {
			t.Errorf("group mode %q: container NetworkMode = %q", mode, spec.HostConfig.NetworkMode)
		}
	}
}

// A docker task in a bridge-mode group is refused with the reason rather
// than run in Docker's own network, where the group's ports and localhost
// would not work.
func TestBuildSpecBridgeModeRefused(t *testing.T) {
	plugin := &Config{}
	plugin.setDefaults()
	cfg := specConfig(`{"image":"busybox"}`)
	cfg.NetworkMode = "bridge"
	cfg.NetworkIsolation = &drivers.NetworkIsolationSpec{Path: "/var/lib/drover/netns/a1", IP: "172.26.64.2"}
	env := containerEnv(cfg.Env)
	conf, err := decodeTaskConfig(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	_, err = buildSpec(cfg, conf, env, specInput{plugin: plugin, cpuMHz: 1000})
	if err == nil || !strings.Contains(err.Error(), `network mode "bridge": the docker driver cannot join the allocation's network namespace yet`) {
		t.Fatalf("err = %v, want the refusal", err)
	}
}
