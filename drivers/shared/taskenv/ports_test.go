package taskenv

import "testing"

func TestPortEnv(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want map[string]string // a subset of the environment
		none []string          // variables that must be unset
	}{
		{
			name: "dynamic group port without to",
			in:   Input{Ports: []Port{{Label: "http", HostIP: "10.0.0.5", Value: 23456}}},
			want: map[string]string{
				"NOMAD_PORT_http": "23456", "NOMAD_ALLOC_PORT_http": "23456", "NOMAD_HOST_PORT_http": "23456",
				"NOMAD_IP_http": "10.0.0.5", "NOMAD_HOST_IP_http": "10.0.0.5",
				"NOMAD_ADDR_http": "10.0.0.5:23456", "NOMAD_HOST_ADDR_http": "10.0.0.5:23456",
			},
		},
		{
			name: "group port mapped with to",
			in:   Input{Ports: []Port{{Label: "db", HostIP: "127.0.0.1", Value: 20001, To: 6379}}},
			want: map[string]string{
				"NOMAD_PORT_db": "6379", "NOMAD_ALLOC_PORT_db": "6379", "NOMAD_HOST_PORT_db": "20001",
				"NOMAD_ADDR_db": "127.0.0.1:20001", "NOMAD_HOST_ADDR_db": "127.0.0.1:20001",
			},
		},
		{
			name: "ipv6 address is bracketed",
			in:   Input{Ports: []Port{{Label: "http", HostIP: "fd00::1", Value: 8080}}},
			want: map[string]string{"NOMAD_ADDR_http": "[fd00::1]:8080", "NOMAD_IP_http": "fd00::1"},
		},
		{
			name: "label cleaned",
			in:   Input{Ports: []Port{{Label: "http-alt", HostIP: "1.2.3.4", Value: 81}}},
			want: map[string]string{"NOMAD_PORT_http_alt": "81", "NOMAD_HOST_ADDR_http_alt": "1.2.3.4:81"},
			none: []string{"NOMAD_PORT_http-alt"},
		},
		{
			name: "task-level ports, own and another task's",
			in: Input{
				TaskPorts:      []Port{{Label: "rpc", HostIP: "1.2.3.4", Value: 25000}},
				OtherTaskPorts: map[string][]Port{"cache": {{Label: "db", HostIP: "1.2.3.4", Value: 25001}}},
			},
			want: map[string]string{
				"NOMAD_PORT_rpc": "25000", "NOMAD_HOST_PORT_rpc": "25000", "NOMAD_IP_rpc": "1.2.3.4", "NOMAD_ADDR_rpc": "1.2.3.4:25000",
				"NOMAD_ADDR_cache_db": "1.2.3.4:25001", "NOMAD_IP_cache_db": "1.2.3.4", "NOMAD_PORT_cache_db": "25001",
			},
			none: []string{"NOMAD_ALLOC_PORT_rpc", "NOMAD_HOST_ADDR_rpc", "NOMAD_PORT_db"},
		},
		{
			name: "env block interpolates port variables",
			in: Input{
				Ports:   []Port{{Label: "http", HostIP: "127.0.0.1", Value: 20000, To: 80}},
				TaskEnv: map[string]string{"LISTEN": ":${NOMAD_PORT_http}", "PUBLIC": "http://${NOMAD_HOST_ADDR_http}/"},
			},
			want: map[string]string{"LISTEN": ":80", "PUBLIC": "http://127.0.0.1:20000/"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Build(&tc.in)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range tc.none {
				if v, ok := got[k]; ok {
					t.Errorf("%s = %q, want it unset", k, v)
				}
			}
		})
	}
}
