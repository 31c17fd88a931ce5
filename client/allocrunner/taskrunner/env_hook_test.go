package taskrunner

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// isolatedDriver is the mock driver reporting another filesystem isolation.
type isolatedDriver struct {
	*mock.Driver
	isolation string
}

func (d *isolatedDriver) Capabilities() *drivers.Capabilities {
	c := *d.Driver.Capabilities()
	c.FSIsolation = d.isolation
	return &c
}

// TestDriverConfigInterpolated: the config block a driver gets has its
// ${...} references resolved, for any driver and in any field, against
// the node and the environment as the driver's task sees it.
func TestDriverConfigInterpolated(t *testing.T) {
	node := &structs.Node{ID: "node-1", Name: "host-1", Datacenter: "dc1", NodeClass: "gpu", NodePool: "default",
		Attributes: map[string]string{"kernel.name": "linux", "unique.hostname": "host-1.example"},
		Meta:       map[string]string{"rack": "r7"}}
	for _, tc := range []struct {
		isolation string
		taskDir   func(dir *allocdir.AllocDir) string
		conf      func(dir *allocdir.AllocDir) string
	}{
		{"none", func(d *allocdir.AllocDir) string { return filepath.Join(d.AllocDir, "web", "local") },
			func(d *allocdir.AllocDir) string { return filepath.Join(d.AllocDir, "web", "local", "app.conf") }},
		{"image", func(*allocdir.AllocDir) string { return "/local" },
			func(*allocdir.AllocDir) string { return "/local/app.conf" }},
	} {
		t.Run(tc.isolation, func(t *testing.T) {
			task := &structs.Task{
				Env: map[string]string{"CONF": "${NOMAD_TASK_DIR}/app.conf"},
				Config: map[string]any{
					"command": "${NOMAD_TASK_DIR}/run",
					"args":    []any{"${node.unique.name}", "${attr.kernel.name}", "${meta.rack}", "${NOMAD_META_owner}", "${CONF}", "${nope.x}"},
					"nested":  map[string]any{"${node.class}": []any{"${attr.unique.hostname}"}},
					"count":   3,
				},
				Meta: map[string]string{"owner": "team-${node.datacenter}"},
			}
			alloc := testAlloc(structs.JobTypeService, task)
			dir := allocdir.New(t.TempDir(), alloc.ID)
			if err := dir.Build(); err != nil {
				t.Fatal(err)
			}
			md := mock.New(nil)
			t.Cleanup(md.Shutdown)
			tr, err := New(&Config{Alloc: alloc, Task: task, AllocDir: dir, Driver: &isolatedDriver{md, tc.isolation},
				StateDB: state.NewMemDB(), Node: node})
			if err != nil {
				t.Fatal(err)
			}
			tr.resources.env = BuildEnv(&PrestartRequest{Alloc: alloc, Task: task, AllocDir: dir, TaskDir: tr.taskDir}, node)
			cfg, err := tr.buildTaskConfig(alloc, task, "abcd1234")
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Command string
				Args    []string
				Nested  map[string][]string
				Count   int
			}
			if err := json.Unmarshal(cfg.RawConfig, &got); err != nil {
				t.Fatal(err)
			}
			want := []string{"host-1", "linux", "r7", "team-dc1", tc.conf(dir), "${nope.x}"}
			if got.Command != tc.taskDir(dir)+"/run" || !slices.Equal(got.Args, want) || got.Count != 3 ||
				len(got.Nested["gpu"]) != 1 || got.Nested["gpu"][0] != "host-1.example" {
				t.Errorf("config = %+v\nwant command %s/run, args %q", got, tc.taskDir(dir), want)
			}
			if cfg.Env["NOMAD_TASK_DIR"] != tc.taskDir(dir) || cfg.Env["CONF"] != tc.conf(dir) {
				t.Errorf("env NOMAD_TASK_DIR = %q, CONF = %q", cfg.Env["NOMAD_TASK_DIR"], cfg.Env["CONF"])
			}
			if task.Config["command"] != "${NOMAD_TASK_DIR}/run" {
				t.Errorf("the task's config was changed: %v", task.Config)
			}
		})
	}
}
