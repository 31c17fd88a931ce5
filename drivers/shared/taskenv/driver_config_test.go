package taskenv

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

func TestForIsolation(t *testing.T) {
	dirs := Dirs{Alloc: "/a/alloc", Task: "/a/web", Local: "/a/web/local", Secrets: "/a/web/secrets"}
	env := map[string]string{
		AllocDir: "/a/alloc", TaskDir: "/a/web/local", SecretsDir: "/a/web/secrets",
		"CONF":   "/a/web/local/app.conf",
		"KEY":    "/a/web/secrets/key.pem",
		"SHARED": "/a/alloc/data",
		"BIN":    "/a/web/bin/app",
		"NEAR":   "/a/web/localx",
		"OTHER":  "/etc/hosts",
		"PLAIN":  "hello",
		"SOCK":   "unix:///a/web/secrets/api.sock",
		"USOCK":  "unix:///run/other.sock",
	}
	cases := []struct {
		isolation string
		want      map[string]string
	}{
		{IsolationNone, env},
		{"", env},
		{IsolationImage, map[string]string{
			AllocDir: "/alloc", TaskDir: "/local", SecretsDir: "/secrets",
			"CONF": "/local/app.conf", "KEY": "/secrets/key.pem", "SHARED": "/alloc/data",
			// Not mounted in an image: left as is.
			"BIN": "/a/web/bin/app", "NEAR": "/a/web/localx",
			"OTHER": "/etc/hosts", "PLAIN": "hello",
			"SOCK": "unix:///secrets/api.sock", "USOCK": "unix:///run/other.sock",
		}},
		{IsolationChroot, map[string]string{
			AllocDir: "/alloc", TaskDir: "/local", SecretsDir: "/secrets",
			"CONF": "/local/app.conf", "KEY": "/secrets/key.pem", "SHARED": "/alloc/data",
			// The task directory is the chroot's root.
			"BIN": "/bin/app", "NEAR": "/localx",
			"OTHER": "/etc/hosts", "PLAIN": "hello",
			"SOCK": "unix:///secrets/api.sock", "USOCK": "unix:///run/other.sock",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.isolation, func(t *testing.T) {
			before := maps.Clone(env)
			got := ForIsolation(env, tc.isolation, dirs)
			if !maps.Equal(got, tc.want) {
				t.Errorf("ForIsolation = %v\nwant %v", got, tc.want)
			}
			if !maps.Equal(env, before) {
				t.Error("ForIsolation changed its input")
			}
		})
	}
}

// TestDriverConfigInterpolation is what the task runner does to a task's
// config block before the driver gets it: every string, at any depth,
// for any driver, with the environment as the task sees it and the node's
// attributes and meta; unknown references stay.
func TestDriverConfigInterpolation(t *testing.T) {
	in := &Input{
		AllocID: "0123456789abcdef", TaskName: "web", JobName: "shop", Datacenter: "dc1", Region: "eu",
		NodeID: "n-1", NodeName: "host-1", NodeClass: "gpu", NodePool: "default",
		AllocDir: "/a/alloc", TaskDir: "/a/web", LocalDir: "/a/web/local", SecretsDir: "/a/web/secrets",
		Meta:      map[string]string{"version": "1.2"},
		TaskEnv:   map[string]string{"CONF": "${NOMAD_TASK_DIR}/app.conf"},
		NodeAttrs: map[string]string{"kernel.name": "linux", "unique.hostname": "host-1.example"},
		NodeMeta:  map[string]string{"rack": "r7"},
	}
	dirs := Dirs{Alloc: in.AllocDir, Task: in.TaskDir, Local: in.LocalDir, Secrets: in.SecretsDir}
	raw := json.RawMessage(`{
		"image": "registry/${NOMAD_JOB_NAME}:${NOMAD_META_version}",
		"command": "${NOMAD_TASK_DIR}/run",
		"args": ["--node=${node.unique.name}", "--kernel=${attr.kernel.name}", "--rack=${meta.rack}",
			"--host=${attr.unique.hostname}", "--dc=${node.datacenter}", "--class=${node.class}",
			"--pool=${node.pool}", "--region=${node.region}", "--id=${node.unique.id}",
			"--conf=${env[\"CONF\"]}", "--alloc=${NOMAD_ALLOC_DIR}", "--keep=${NOMAD_ADDR_http} ${attr.nope} $${HOME}"],
		"volumes": ["${NOMAD_ALLOC_DIR}/data:/data"],
		"labels": [{"${NOMAD_TASK_NAME}": "${NOMAD_SHORT_ALLOC_ID}"}],
		"port": 8080,
		"big": 12345678901234567890,
		"on": true
	}`)
	cases := []struct {
		isolation string
		want      string
	}{
		{IsolationNone, `{
			"image": "registry/shop:1.2",
			"command": "/a/web/local/run",
			"args": ["--node=host-1", "--kernel=linux", "--rack=r7", "--host=host-1.example", "--dc=dc1",
				"--class=gpu", "--pool=default", "--region=eu", "--id=n-1",
				"--conf=/a/web/local/app.conf", "--alloc=/a/alloc", "--keep=${NOMAD_ADDR_http} ${attr.nope} $${HOME}"],
			"volumes": ["/a/alloc/data:/data"],
			"labels": [{"web": "01234567"}],
			"port": 8080, "big": 12345678901234567890, "on": true}`},
		{IsolationImage, `{
			"image": "registry/shop:1.2",
			"command": "/local/run",
			"args": ["--node=host-1", "--kernel=linux", "--rack=r7", "--host=host-1.example", "--dc=dc1",
				"--class=gpu", "--pool=default", "--region=eu", "--id=n-1",
				"--conf=/local/app.conf", "--alloc=/alloc", "--keep=${NOMAD_ADDR_http} ${attr.nope} $${HOME}"],
			"volumes": ["/alloc/data:/data"],
			"labels": [{"web": "01234567"}],
			"port": 8080, "big": 12345678901234567890, "on": true}`},
	}
	for _, tc := range cases {
		t.Run(tc.isolation, func(t *testing.T) {
			env := ForIsolation(Build(in), tc.isolation, dirs)
			got, err := InterpolateJSON(raw, env, NodeAttrs(in), in.NodeMeta)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &w); err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if string(gb) != string(wb) {
				t.Errorf("interpolated config:\n%s\nwant\n%s", gb, wb)
			}
			if !strings.Contains(string(got), "12345678901234567890") {
				t.Errorf("numbers lost their exact text: %s", got)
			}
		})
	}
}
