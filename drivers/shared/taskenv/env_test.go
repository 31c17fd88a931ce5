package taskenv

import (
	"maps"
	"testing"
)

func TestBuild(t *testing.T) {
	full := &Input{
		AllocID: "0123456789abcdef", AllocName: "web.api[2]", AllocIndex: 2,
		JobID: "web-1", JobName: "web", GroupName: "api", TaskName: "server",
		Namespace: "default", Region: "global", Datacenter: "dc1",
		NodeID: "node-1", NodeName: "host1",
		CPULimit: 500, MemoryLimitMB: 256, MemoryMaxMB: 512,
		AllocDir: "/a/alloc", TaskDir: "/a/server", LocalDir: "/a/server/local", SecretsDir: "/a/server/secrets",
		Meta:      map[string]string{"version": "v1", "team-name": "x", "class": "${node.class}", "where": "${NOMAD_DC}/${meta.rack}", "self": "${NOMAD_META_version}"},
		NodeClass: "gpu",
		TaskEnv: map[string]string{
			"GREETING":                 "hello ${NOMAD_TASK_NAME} in ${node.datacenter}",
			"KERNEL":                   "${attr.kernel.name}",
			"RACK":                     "${meta.rack}",
			"VER":                      "${NOMAD_META_VERSION}",
			"NOMAD_DC":                 "override",
			"UNKNOWN":                  "${NOPE}",
			"KEY_${NOMAD_ALLOC_INDEX}": "k",
		},
		NodeAttrs: map[string]string{"kernel.name": "linux"},
		NodeMeta:  map[string]string{"rack": "r1"},
	}
	cases := []struct {
		name string
		in   *Input
		want map[string]string
	}{
		{
			name: "minimal",
			in:   &Input{AllocID: "abc", TaskName: "t", TaskDir: "/a/t"},
			want: map[string]string{
				"NOMAD_ALLOC_ID": "abc", "NOMAD_SHORT_ALLOC_ID": "abc", "NOMAD_ALLOC_INDEX": "0",
				"NOMAD_TASK_NAME": "t", "NOMAD_TASK_DIR": "/a/t",
			},
		},
		{
			name: "full",
			in:   full,
			want: map[string]string{
				"NOMAD_ALLOC_ID": "0123456789abcdef", "NOMAD_SHORT_ALLOC_ID": "01234567",
				"NOMAD_ALLOC_NAME": "web.api[2]", "NOMAD_ALLOC_INDEX": "2",
				"NOMAD_JOB_ID": "web-1", "NOMAD_JOB_NAME": "web", "NOMAD_GROUP_NAME": "api",
				"NOMAD_TASK_NAME": "server", "NOMAD_NAMESPACE": "default", "NOMAD_REGION": "global",
				"NOMAD_DC": "override", "NOMAD_CPU_LIMIT": "500", "NOMAD_MEMORY_LIMIT": "256",
				"NOMAD_MEMORY_MAX_LIMIT": "512", "NOMAD_ALLOC_DIR": "/a/alloc",
				"NOMAD_TASK_DIR": "/a/server/local", "NOMAD_SECRETS_DIR": "/a/server/secrets",
				"NOMAD_META_version": "v1", "NOMAD_META_VERSION": "v1",
				"NOMAD_META_team_name": "x", "NOMAD_META_TEAM_NAME": "x",
				"NOMAD_META_class": "gpu", "NOMAD_META_CLASS": "gpu",
				"NOMAD_META_where": "dc1/r1", "NOMAD_META_WHERE": "dc1/r1",
				// Meta values do not reference each other: the result
				// would depend on the order they are read in.
				"NOMAD_META_self": "${NOMAD_META_version}", "NOMAD_META_SELF": "${NOMAD_META_version}",
				"GREETING": "hello server in dc1", "KERNEL": "linux", "RACK": "r1", "VER": "v1",
				"UNKNOWN": "${NOPE}", "KEY_2": "k",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Build(tc.in)
			if !maps.Equal(got, tc.want) {
				for k, v := range tc.want {
					if got[k] != v {
						t.Errorf("%s = %q, want %q", k, got[k], v)
					}
				}
				for k, v := range got {
					if _, ok := tc.want[k]; !ok {
						t.Errorf("unexpected %s = %q", k, v)
					}
				}
			}
		})
	}
}

func TestNodeAttrs(t *testing.T) {
	in := &Input{NodeID: "n1", NodeName: "h1", Datacenter: "dc1", Region: "r", NodeClass: "c", NodePool: "p",
		NodeAttrs: map[string]string{"cpu.arch": "amd64"}}
	want := map[string]string{"cpu.arch": "amd64", "node.unique.id": "n1", "node.unique.name": "h1",
		"node.datacenter": "dc1", "node.region": "r", "node.class": "c", "node.pool": "p"}
	if got := NodeAttrs(in); !maps.Equal(got, want) {
		t.Fatalf("NodeAttrs = %v, want %v", got, want)
	}
	if _, ok := in.NodeAttrs["node.unique.id"]; ok {
		t.Fatal("NodeAttrs changed its input")
	}
}
