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

// A docker task in a bridge-mode group joins the infra container's
// network, publishes nothing itself (the namespace's portmap does), and
// options Docker refuses with a shared network are errors naming where
// they belong; a namespace the client made (no infra container) is refused.
func TestBuildSpecBridgeModeJoinsInfra(t *testing.T) {
	plugin := &Config{}
	plugin.setDefaults()
	infra := &drivers.NetworkIsolationSpec{Path: "/proc/42/ns/net", IP: "172.26.64.2",
		Labels: map[string]string{drivers.NetworkLabelSandboxContainer: "c0ffee"}}
	cases := []struct {
		name    string
		config  string
		spec    *drivers.NetworkIsolationSpec
		wantErr string
	}{
		{name: "joins", config: `{"image":"busybox","ports":["http"]}`, spec: infra},
		{name: "client-made namespace", config: `{"image":"busybox"}`, spec: &drivers.NetworkIsolationSpec{Path: "/var/lib/drover/netns/a1"},
			wantErr: `network mode "bridge": the allocation's network namespace has no infra container`},
		{name: "network_mode", config: `{"image":"busybox","network_mode":"host"}`, spec: infra, wantErr: "sets its own network_mode"},
		{name: "hostname", config: `{"image":"busybox","hostname":"x"}`, spec: infra, wantErr: "hostname (use the group network's hostname)"},
		{name: "dns", config: `{"image":"busybox","dns_servers":["1.1.1.1"]}`, spec: infra, wantErr: "use the group network's dns block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := specConfig(tc.config)
			cfg.NetworkMode = "bridge"
			cfg.NetworkIsolation = tc.spec
			cfg.Ports = []*drivers.PortMapping{{Label: "http", Value: 23456, To: 8080}}
			env := containerEnv(cfg.Env)
			conf, err := decodeTaskConfig(cfg, env)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := buildSpec(cfg, conf, env, specInput{plugin: plugin, cpuMHz: 1000})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.HostConfig.NetworkMode != "container:c0ffee" || len(spec.HostConfig.PortBindings) != 0 {
				t.Fatalf("network mode %q, bindings %v: want the infra container's network and no bindings", spec.HostConfig.NetworkMode, spec.HostConfig.PortBindings)
			}
		})
	}
}

// The infra container runs in Docker's "none" network (CNI wires it) with
// the group's hostname and dns block, labelled with its allocation.
func TestInfraContainerSpec(t *testing.T) {
	req := &drivers.CreateNetworkRequest{AllocID: "a1", Hostname: "web-1",
		DNS: &drivers.DNSConfig{Servers: []string{"10.0.0.53", "fd00::53"}, Searches: []string{"svc.local"}, Options: []string{"ndots:2"}}}
	cc, err := infraContainerSpec("drover-pause:1-amd64", req)
	if err != nil {
		t.Fatal(err)
	}
	hc := cc.HostConfig
	if hc.NetworkMode != "none" || cc.Config.Hostname != "web-1" || cc.Config.Labels[LabelAllocID] != "a1" || cc.Config.Labels[labelInfra] != "true" {
		t.Fatalf("spec %+v %+v", cc.Config, hc)
	}
	if len(hc.DNS) != 2 || hc.DNS[1].String() != "fd00::53" || hc.DNSSearch[0] != "svc.local" || hc.DNSOptions[0] != "ndots:2" {
		t.Fatalf("dns %v %v %v", hc.DNS, hc.DNSSearch, hc.DNSOptions)
	}
	req.DNS.Servers = []string{"not-an-ip"}
	if _, err := infraContainerSpec("x", req); err == nil || !strings.Contains(err.Error(), `"not-an-ip" is not an IP address`) {
		t.Fatalf("err = %v", err)
	}
}
