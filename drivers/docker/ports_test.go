package docker

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"

	"github.com/drover-io/drover/plugins/drivers"
)

// renderBindings renders a container's port bindings, sorted:
// "80/tcp=127.0.0.1:20001".
func renderBindings(pm network.PortMap) string {
	var out []string
	for port, bs := range pm {
		for _, b := range bs {
			out = append(out, fmt.Sprintf("%s=%s:%s", port, b.HostIP, b.HostPort))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestPublishPorts(t *testing.T) {
	allocPorts := []*drivers.PortMapping{
		{Label: "http", HostIP: "127.0.0.1", Value: 20001, To: 80},
		{Label: "admin", HostIP: "127.0.0.1", Value: 9000},
		{Label: "rpc", HostIP: "10.0.0.5", Value: 25000},
	}
	cases := []struct {
		name        string
		raw         string
		groupMode   string
		want        string // renderBindings
		wantMode    string
		wantEnv     []string
		wantErr     string
		wantExposed int
	}{
		{name: "no ports", raw: `{"image":"busybox"}`, wantMode: "default"},
		{
			name: "to, and the same port without it", raw: `{"image":"busybox","ports":["http","admin"]}`,
			want:     "80/tcp=127.0.0.1:20001 80/udp=127.0.0.1:20001 9000/tcp=127.0.0.1:9000 9000/udp=127.0.0.1:9000",
			wantMode: "default", wantExposed: 4,
		},
		{
			name: "port_map maps and sets NOMAD_PORT", raw: `{"image":"busybox","port_map":[{"rpc":"8080"}]}`,
			want: "8080/tcp=10.0.0.5:25000 8080/udp=10.0.0.5:25000", wantMode: "default", wantEnv: []string{"NOMAD_PORT_rpc=8080"}, wantExposed: 2,
		},
		{
			name: "group host mode still publishes", raw: `{"image":"busybox","ports":["http"]}`, groupMode: "host",
			want: "80/tcp=127.0.0.1:20001 80/udp=127.0.0.1:20001", wantMode: "default", wantExposed: 2,
		},
		{name: "network_mode host with the same port", raw: `{"image":"busybox","ports":["admin"],"network_mode":"host"}`, wantMode: "host"},
		{name: "network_mode host with a mapping", raw: `{"image":"busybox","ports":["http"],"network_mode":"host"}`,
			wantErr: `port "http": network_mode "host" publishes no ports: the container listens on the host's port 20001 itself, not on 80`},
		{name: "network_mode none", raw: `{"image":"busybox","ports":["http"],"network_mode":"none"}`,
			wantErr: `ports "http": network_mode "none" has no network to publish them on`},
		{name: "group none", raw: `{"image":"busybox","ports":["http"]}`, groupMode: "none", wantErr: `network_mode "none"`},
		{name: "another container's network", raw: `{"image":"busybox","ports":["http"],"network_mode":"container:abc"}`, wantMode: "container:abc"},
		{name: "user network", raw: `{"image":"busybox","ports":["admin"],"network_mode":"mynet"}`,
			want: "9000/tcp=127.0.0.1:9000 9000/udp=127.0.0.1:9000", wantMode: "mynet", wantExposed: 2},
		{name: "undeclared label", raw: `{"image":"busybox","ports":["db"]}`,
			wantErr: `ports: port "db" is not one of the allocation's ports (it has "http", "admin", "rpc"): declare it in the group's network block, port "db" {}`},
		{name: "port_map not a port", raw: `{"image":"busybox","port_map":[{"rpc":"web"}]}`, wantErr: `port_map: rpc = "web" is not a port number`},
		{name: "interpolated label", raw: `{"image":"busybox","ports":["${LABEL}"]}`,
			want: "9000/tcp=127.0.0.1:9000 9000/udp=127.0.0.1:9000", wantMode: "default", wantExposed: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := specConfig(tc.raw)
			cfg.Ports = allocPorts
			cfg.NetworkMode = tc.groupMode
			cfg.Env["LABEL"] = "admin"
			env := containerEnv(cfg.Env)
			conf, err := decodeTaskConfig(cfg, env)
			var spec *containerCreate
			if err == nil {
				spec, err = buildSpec(cfg, conf, env, specInput{plugin: DefaultConfig(), cpuMHz: 1000})
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := renderBindings(spec.HostConfig.PortBindings); got != tc.want {
				t.Errorf("bindings = %q, want %q", got, tc.want)
			}
			if len(spec.ExposedPorts) != tc.wantExposed {
				t.Errorf("exposed = %v, want %d ports", spec.ExposedPorts, tc.wantExposed)
			}
			if string(spec.HostConfig.NetworkMode) != tc.wantMode {
				t.Errorf("network mode = %q, want %q", spec.HostConfig.NetworkMode, tc.wantMode)
			}
			for _, e := range tc.wantEnv {
				if !slices.Contains(spec.Env, e) {
					t.Errorf("env %q lacks %q", spec.Env, e)
				}
			}
		})
	}
}

func TestCheckPublished(t *testing.T) {
	asked := network.PortMap{network.MustParsePort("80/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "20001"}}}
	inspected := func(pm network.PortMap) *container.InspectResponse {
		return &container.InspectResponse{NetworkSettings: &container.NetworkSettings{Ports: pm},
			HostConfig: &container.HostConfig{NetworkMode: "default"}}
	}
	if err := checkPublished(asked, inspected(asked)); err != nil {
		t.Errorf("published: %v", err)
	}
	if err := checkPublished(nil, inspected(nil)); err != nil {
		t.Errorf("nothing asked: %v", err)
	}
	err := checkPublished(asked, inspected(network.PortMap{}))
	if !errors.Is(err, errNotPublished) || !strings.Contains(err.Error(), "container port 80/tcp to host port 20001") || !strings.Contains(err.Error(), "--bridge=none") {
		t.Errorf("not published: %v", err)
	}
	if err := checkPublished(asked, &container.InspectResponse{}); !errors.Is(err, errNotPublished) {
		t.Errorf("no network settings: %v", err)
	}
}
