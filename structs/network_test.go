package structs

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestTaskGroupCopyNetworks(t *testing.T) {
	tg := &TaskGroup{Networks: []*NetworkResource{{Mode: NetworkModeNone, DynamicPorts: []Port{{Label: "http"}}}}}
	c := tg.Copy()
	c.Networks[0].Mode = NetworkModeHost
	c.Networks[0].DynamicPorts[0].Label = "changed"
	if tg.Networks[0].Mode != NetworkModeNone || tg.Networks[0].DynamicPorts[0].Label != "http" {
		t.Fatal("Copy shares network blocks with the original")
	}
	if (&TaskGroup{}).Copy().Networks != nil {
		t.Fatal("Copy of a group without networks has networks")
	}
}

func TestAllocationCopyPorts(t *testing.T) {
	a := &Allocation{
		AllocatedResources: &AllocatedResources{
			Tasks: map[string]*AllocatedTaskResources{"t": {Networks: []*NetworkResource{{IP: "1.2.3.4", ReservedPorts: []Port{{Label: "a", Value: 1}}}}}},
			Shared: AllocatedSharedResources{
				Networks: []*NetworkResource{{IP: "1.2.3.4", DynamicPorts: []Port{{Label: "http", Value: 20000}}}},
				Ports:    AllocatedPorts{{Label: "http", Value: 20000, HostIP: "1.2.3.4"}},
			},
		},
		NetworkStatus: &AllocNetworkStatus{Address: "172.26.64.2", DNS: &DNSConfig{Servers: []string{"1.1.1.1"}}},
	}
	c := a.Copy()
	c.AllocatedResources.Shared.Ports[0].Value = 1
	c.AllocatedResources.Shared.Networks[0].DynamicPorts[0].Value = 1
	c.AllocatedResources.Tasks["t"].Networks[0].ReservedPorts[0].Value = 2
	c.NetworkStatus.DNS.Servers[0] = "x"
	if a.AllocatedResources.Shared.Ports[0].Value != 20000 || a.AllocatedResources.Shared.Networks[0].DynamicPorts[0].Value != 20000 ||
		a.AllocatedResources.Tasks["t"].Networks[0].ReservedPorts[0].Value != 1 || a.NetworkStatus.DNS.Servers[0] != "1.1.1.1" {
		t.Fatal("Allocation.Copy shares ports or network status with the original")
	}
	if p, ok := a.AllocatedResources.Shared.Ports.Get("http"); !ok || p.Value != 20000 {
		t.Fatalf("Get(http) = %+v, %v", p, ok)
	}
	if _, ok := a.AllocatedResources.Shared.Ports.Get("nope"); ok {
		t.Fatal("Get(nope) found a port")
	}
}

func TestNodeCopyNetworks(t *testing.T) {
	n := &Node{
		NodeResources: &NodeResources{NodeNetworks: []*NodeNetworkResource{{Device: "eth0", Addresses: []NodeNetworkAddress{{Address: "10.0.0.1"}}}}},
		HostNetworks:  map[string]*ClientHostNetworkConfig{"public": {Name: "public", CIDR: "10.0.0.0/8"}},
	}
	c := n.Copy()
	c.NodeResources.NodeNetworks[0].Addresses[0].Address = "x"
	c.HostNetworks["public"].CIDR = "x"
	if n.NodeResources.NodeNetworks[0].Addresses[0].Address != "10.0.0.1" || n.HostNetworks["public"].CIDR != "10.0.0.0/8" {
		t.Fatal("Node.Copy shares networks with the original")
	}
}

func TestParsePortRanges(t *testing.T) {
	cases := []struct {
		spec    string
		want    []int
		wantErr string
	}{
		{spec: "", want: nil},
		{spec: "22", want: []int{22}},
		{spec: "22, 80,8500-8502", want: []int{22, 80, 8500, 8501, 8502}},
		{spec: "80,22,80,21-23", want: []int{21, 22, 23, 80}},
		{spec: "1,65535", want: []int{1, 65535}},
		{spec: "0", wantErr: "port 0 is out of range 1-65535"},
		{spec: "70000", wantErr: "out of range"},
		{spec: "http", wantErr: `"http" is not a port number`},
		{spec: "90-80", wantErr: "write the lower port first"},
		{spec: "80-", wantErr: `"" is not a port number`},
	}
	for _, tc := range cases {
		got, err := ParsePortRanges(tc.spec)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePortRanges(%q) error = %v, want %q", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParsePortRanges(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
}

func TestValidateNetworks(t *testing.T) {
	docker := func(ports ...any) *Task {
		return &Task{Name: "web", Driver: "docker", Config: map[string]any{"image": "redis", "ports": ports}}
	}
	raw := &Task{Name: "web", Driver: "raw_exec"}
	cases := []struct {
		name     string
		networks []*NetworkResource
		tasks    []*Task
		wantErrs []string // each must appear; none: valid
	}{
		{name: "dynamic and static ports", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}}, ReservedPorts: []Port{{Label: "admin", Value: 9000}}}}},
		{name: "docker publishes with to", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "db", To: 6379}}}}, tasks: []*Task{docker("db")}},
		{name: "to equal to the static port", networks: []*NetworkResource{{ReservedPorts: []Port{{Label: "http", Value: 8080, To: 8080}}}}},
		{name: "to in host mode for raw_exec", networks: []*NetworkResource{{Mode: "host", DynamicPorts: []Port{{Label: "http", To: 8080}}}}, tasks: []*Task{raw},
			wantErrs: []string{`port "http": to = 8080 means nothing in host network mode`}},
		{name: "static out of range", networks: []*NetworkResource{{ReservedPorts: []Port{{Label: "http", Value: 70000}}}},
			wantErrs: []string{`port "http": static = 70000 is out of range 1-65535`}},
		{name: "static zero", networks: []*NetworkResource{{ReservedPorts: []Port{{Label: "http", Value: 0}}}},
			wantErrs: []string{`static = 0 is out of range`}},
		{name: "to out of range", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http", To: -1}}}},
			wantErrs: []string{`to = -1 is out of range 0-65535`}},
		{name: "duplicate label", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}}, ReservedPorts: []Port{{Label: "http", Value: 80}}}},
			wantErrs: []string{`port label "http" is declared twice`}},
		{name: "duplicate label across group and task", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}}}},
			tasks:    []*Task{{Name: "web", Driver: "raw_exec", Resources: &Resources{Networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}}}}}}},
			wantErrs: []string{`port label "http" is declared twice (group and task "web" network)`}},
		{name: "static twice", networks: []*NetworkResource{{ReservedPorts: []Port{{Label: "a", Value: 80}, {Label: "b", Value: 80}}}},
			wantErrs: []string{`static port 80 is asked twice on host network "default"`}},
		{name: "static twice with ignore_collision", networks: []*NetworkResource{{ReservedPorts: []Port{{Label: "a", Value: 80, IgnoreCollision: true}, {Label: "b", Value: 80, IgnoreCollision: true}}}}},
		{name: "static twice on different host networks", networks: []*NetworkResource{{ReservedPorts: []Port{{Label: "a", Value: 80}, {Label: "b", Value: 80, HostNetwork: "public"}}}}},
		{name: "no label", networks: []*NetworkResource{{DynamicPorts: []Port{{}}}}, wantErrs: []string{"a port has no label"}},
		{name: "dynamic with a value", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http", Value: 80}}}},
			wantErrs: []string{`a dynamic port has no value (80): use static = 80`}},
		{name: "ignore_collision on a dynamic port", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http", IgnoreCollision: true}}}},
			wantErrs: []string{"ignore_collision needs a static port"}},
		{name: "docker names an undeclared label", networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}}}}, tasks: []*Task{docker("htp")},
			wantErrs: []string{`config ports names port "htp", which no network block declares: add port "htp" {} to the group's network block (declared: http)`}},
		{name: "docker ports without network", tasks: []*Task{docker("db")},
			wantErrs: []string{`config ports names port "db", which no network block declares`, `(declared: none)`}},
		{name: "docker ports not a list of strings", tasks: []*Task{{Name: "web", Driver: "docker", Config: map[string]any{"ports": "http"}}},
			wantErrs: []string{"config ports must be a list of port labels"}},
		{name: "port_map names an undeclared label", tasks: []*Task{{Name: "web", Driver: "docker", Config: map[string]any{"port_map": map[string]any{"db": float64(6379)}}}},
			wantErrs: []string{`config port_map names port "db"`}},
		{name: "port_map block names an undeclared label", tasks: []*Task{{Name: "web", Driver: "docker", Config: map[string]any{"port_map": []any{map[string]any{"db": float64(6379)}}}}},
			wantErrs: []string{`config port_map names port "db"`}},
		{name: "port_map with task-level ports and to", tasks: []*Task{{Name: "web", Driver: "docker",
			Config:    map[string]any{"port_map": []any{map[string]any{"db": float64(6379)}}},
			Resources: &Resources{CPU: 100, MemoryMB: 100, Networks: []*NetworkResource{{DynamicPorts: []Port{{Label: "db"}}}}}}}},
		{name: "ports in mode none", networks: []*NetworkResource{{Mode: "none", DynamicPorts: []Port{{Label: "http"}}}},
			wantErrs: []string{`network mode "none" has no network to give ports on`}},
		{name: "unknown mode", networks: []*NetworkResource{{Mode: "overlay"}}, wantErrs: []string{`network mode "overlay" is not supported`}},
		{name: "bridge mode", networks: []*NetworkResource{{Mode: "bridge", DynamicPorts: []Port{{Label: "http", To: 8080}}}}},
		{name: "cni mode", networks: []*NetworkResource{{Mode: "cni/my-net_1.0"}}},
		{name: "docker in bridge mode", networks: []*NetworkResource{{Mode: "bridge"}},
			tasks: []*Task{{Name: "web", Driver: "docker", Config: map[string]any{"image": "redis"}}}},
		{name: "docker in bridge mode with its own network settings", networks: []*NetworkResource{{Mode: "bridge"}},
			tasks:    []*Task{{Name: "web", Driver: "docker", Config: map[string]any{"image": "redis", "hostname": "x", "dns_servers": []any{"1.1.1.1"}}}},
			wantErrs: []string{`group "g", task "web": config hostname, dns_servers: the task joins the group's network namespace (mode "bridge")`}},
		{name: "podman in bridge mode", networks: []*NetworkResource{{Mode: "bridge"}},
			tasks:    []*Task{{Name: "web", Driver: "podman", Config: map[string]any{"image": "redis"}}},
			wantErrs: []string{`group "g", task "web": the podman driver cannot run in network mode "bridge"`}},
		{name: "bridge dns, hostname and cni args", networks: []*NetworkResource{{Mode: "bridge", Hostname: "web-1.example",
			DNS: &DNSConfig{Servers: []string{"10.0.0.53", "fd00::53"}}, CNI: &CNIConfig{Args: map[string]string{"IgnoreUnknown": "1"}}}}},
		{name: "bad dns server", networks: []*NetworkResource{{Mode: "bridge", DNS: &DNSConfig{Servers: []string{"dns.example"}}}},
			wantErrs: []string{`network dns: servers: "dns.example" is not an IP address`}},
		{name: "bad hostname", networks: []*NetworkResource{{Mode: "bridge", Hostname: "web_1"}},
			wantErrs: []string{`network: hostname "web_1" is not a host name`}},
		{name: "bad cni args", networks: []*NetworkResource{{Mode: "cni/mynet", CNI: &CNIConfig{Args: map[string]string{"a;b": "1", "c": "x;y"}}}},
			wantErrs: []string{`network cni: args "a;b" = "1"`, `network cni: args "c" = "x;y"`}},
		{name: "cni mode with a bad name", networks: []*NetworkResource{{Mode: "cni/my net"}}, wantErrs: []string{`network mode "cni/my net": a CNI network's name is letters`}},
		{name: "two blocks", networks: []*NetworkResource{{}, {}}, wantErrs: []string{"only one network block is allowed per group, found 2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tg := j.TaskGroups[0]
			tg.Networks = tc.networks
			if tc.tasks != nil {
				tg.Tasks = tc.tasks
			}
			j.Canonicalize()
			err := j.Validate()
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate passed, want %q", tc.wantErrs)
			}
			if KindOf(err) != KindInvalid {
				t.Errorf("kind = %v, want invalid", KindOf(err))
			}
			for _, w := range tc.wantErrs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestFlatNetwork(t *testing.T) {
	n := &NetworkResource{Mode: "host", DynamicPorts: []Port{{Label: "http", To: 80}}, ReservedPorts: []Port{{Label: "admin", Value: 9000, HostNetwork: "private"}}}
	want := map[string]string{"Mode": "host", "Port[http]": "dynamic, to 80", "Port[admin]": "static 9000, host network private"}
	if got := flatNetwork(n); !reflect.DeepEqual(got, want) {
		t.Fatalf("flatNetwork = %v, want %v", got, want)
	}
}
