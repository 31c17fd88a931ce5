package taskrunner

import (
	"reflect"
	"testing"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// portsAlloc has a group port "http" mapped to 80 and, in older task-level
// blocks, a port "rpc" of task web and a port "db" of task cache.
func portsAlloc() *structs.Allocation {
	alloc := testAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{"run_for": "1ms"}})
	alloc.AllocatedResources = &structs.AllocatedResources{
		Tasks: map[string]*structs.AllocatedTaskResources{
			"web":   {Networks: []*structs.NetworkResource{{IP: "10.0.0.1", DynamicPorts: []structs.Port{{Label: "rpc", Value: 25000}}}}},
			"cache": {Networks: []*structs.NetworkResource{{IP: "10.0.0.1", ReservedPorts: []structs.Port{{Label: "db", Value: 6379}}}}},
		},
		Shared: structs.AllocatedSharedResources{Ports: structs.AllocatedPorts{{Label: "http", Value: 23456, To: 80, HostIP: "10.0.0.1"}}},
	}
	return alloc
}

// The task's environment has the port variables of the group's and the
// task-level ports, and the driver gets the ports it may publish.
func TestTaskRunnerPorts(t *testing.T) {
	alloc := portsAlloc()
	task := alloc.Job.TaskGroups[0].Tasks[0]
	env := BuildEnv(&PrestartRequest{Alloc: alloc, Task: task, AllocDir: &allocdir.AllocDir{}, TaskDir: &allocdir.TaskDir{}}, nil)
	for k, v := range map[string]string{
		"NOMAD_PORT_http": "80", "NOMAD_HOST_PORT_http": "23456", "NOMAD_ADDR_http": "10.0.0.1:23456",
		"NOMAD_ALLOC_PORT_http": "80", "NOMAD_HOST_IP_http": "10.0.0.1",
		"NOMAD_PORT_rpc": "25000", "NOMAD_ADDR_cache_db": "10.0.0.1:6379",
	} {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["NOMAD_PORT_db"]; ok {
		t.Error("another task's task-level port is in this task's NOMAD_PORT_*")
	}

	h := newHarness(t, alloc, nil, nil)
	cfg, err := h.tr.buildTaskConfig(alloc, task, "abcd1234")
	if err != nil {
		t.Fatal(err)
	}
	want := []*drivers.PortMapping{{Label: "http", HostIP: "10.0.0.1", Value: 23456, To: 80}, {Label: "rpc", HostIP: "10.0.0.1", Value: 25000}}
	if !reflect.DeepEqual(cfg.Ports, want) {
		t.Errorf("TaskConfig.Ports = %+v, want %+v", cfg.Ports, want)
	}
	cfg, err = h.tr.buildTaskConfig(testAlloc(structs.JobTypeService, &structs.Task{Name: "web"}), task, "abcd1234")
	if err != nil || cfg.Ports != nil {
		t.Errorf("an allocation without ports: Ports = %+v, %v", cfg.Ports, err)
	}
}
