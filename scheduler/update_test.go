package scheduler

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestTasksUpdated(t *testing.T) {
	base := func() *structs.TaskGroup { return newJob("web", structs.JobTypeService, 2, 100, 256).TaskGroups[0] }
	cases := []struct {
		name   string
		change func(tg *structs.TaskGroup)
		want   bool
	}{
		{"nothing", func(*structs.TaskGroup) {}, false},
		{"count", func(tg *structs.TaskGroup) { tg.Count = 5 }, false},
		{"update block", func(tg *structs.TaskGroup) { tg.Update = structs.DefaultUpdateStrategy() }, false},
		{"group service", func(tg *structs.TaskGroup) {
			tg.Services = []*structs.Service{{Name: "web", Provider: structs.ServiceProviderNomad, Tags: []string{"v2"}}}
		}, false},
		{"task service and its check", func(tg *structs.TaskGroup) {
			tg.Tasks[0].Services = []*structs.Service{{Name: "api", Provider: structs.ServiceProviderNomad,
				Checks: []*structs.ServiceCheck{{Name: "alive", Type: structs.ServiceCheckTCP, Interval: 10e9}}}}
		}, false},
		{"template", func(tg *structs.TaskGroup) {
			tg.Tasks[0].Templates = []*structs.Template{{EmbeddedTmpl: "x", DestPath: "local/x"}}
		}, true},
		{"empty vs nil env", func(tg *structs.TaskGroup) { tg.Tasks[0].Env = map[string]string{} }, false},
		{"driver", func(tg *structs.TaskGroup) { tg.Tasks[0].Driver = "exec" }, true},
		{"config", func(tg *structs.TaskGroup) { tg.Tasks[0].Config = map[string]any{"run_for": "1s"} }, true},
		{"env", func(tg *structs.TaskGroup) { tg.Tasks[0].Env = map[string]string{"A": "1"} }, true},
		{"user", func(tg *structs.TaskGroup) { tg.Tasks[0].User = "nobody" }, true},
		{"resources", func(tg *structs.TaskGroup) { tg.Tasks[0].Resources.MemoryMB = 512 }, true},
		{"lifecycle", func(tg *structs.TaskGroup) {
			tg.Tasks[0].Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
		}, true},
		{"kill timeout", func(tg *structs.TaskGroup) { tg.Tasks[0].KillTimeout = 30e9 }, true},
		{"kill signal", func(tg *structs.TaskGroup) { tg.Tasks[0].KillSignal = "SIGINT" }, true},
		{"restart", func(tg *structs.TaskGroup) { tg.RestartPolicy.Attempts = 9 }, true},
		{"task restart", func(tg *structs.TaskGroup) { tg.Tasks[0].RestartPolicy.Attempts = 9 }, true},
		{"group meta", func(tg *structs.TaskGroup) { tg.Meta = map[string]string{"a": "b"} }, true},
		{"task meta", func(tg *structs.TaskGroup) { tg.Tasks[0].Meta = map[string]string{"a": "b"} }, true},
		{"disk", func(tg *structs.TaskGroup) { tg.EphemeralDisk.SizeMB = 1000 }, true},
		{"network mode", func(tg *structs.TaskGroup) {
			tg.Networks = []*structs.NetworkResource{{Mode: structs.NetworkModeNone}}
		}, true},
		{"constraint", func(tg *structs.TaskGroup) {
			tg.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
		}, true},
		{"task added", func(tg *structs.TaskGroup) {
			tg.Tasks = append(tg.Tasks, &structs.Task{Name: "side", Driver: "mock"})
		}, true},
		{"task renamed", func(tg *structs.TaskGroup) { tg.Tasks[0].Name = "other" }, true},
		{"group affinity", func(tg *structs.TaskGroup) {
			tg.Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: 50}}
		}, true},
		{"task affinity", func(tg *structs.TaskGroup) {
			tg.Tasks[0].Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: 50}}
		}, true},
		{"spread", func(tg *structs.TaskGroup) {
			tg.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50}}
		}, true},
		{"identity", func(tg *structs.TaskGroup) { tg.Tasks[0].Identity = &structs.TaskIdentity{Env: true} }, true},
		{"named identity", func(tg *structs.TaskGroup) {
			tg.Tasks[0].Identities = []*structs.TaskIdentity{{Name: "vault", Audience: []string{"vault.io"}}}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new := base(), base()
			c.change(new)
			if got := tasksUpdated(old, new); got != c.want {
				t.Errorf("tasksUpdated = %v, want %v", got, c.want)
			}
		})
	}
}

func TestJobUpdated(t *testing.T) {
	old := newJob("web", structs.JobTypeService, 1, 100, 256)
	cases := []struct {
		name   string
		change func(j *structs.Job)
		want   bool
	}{
		{"priority", func(j *structs.Job) { j.Priority = 90 }, false},
		{"update", func(j *structs.Job) { j.Update = structs.DefaultUpdateStrategy() }, false},
		{"meta", func(j *structs.Job) { j.Meta = map[string]string{"v": "2"} }, true},
		{"datacenters", func(j *structs.Job) { j.Datacenters = []string{"dc2"} }, true},
		{"affinity", func(j *structs.Job) {
			j.Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: 50}}
		}, true},
		{"spread", func(j *structs.Job) { j.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50}} }, true},
		{"node pool", func(j *structs.Job) { j.NodePool = "gpu" }, true},
		{"node pool named default", func(j *structs.Job) { j.NodePool = structs.NodePoolDefault }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := old.Copy()
			c.change(n)
			if got := jobUpdated(old, n); got != c.want {
				t.Errorf("jobUpdated = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSelectPreemptions(t *testing.T) {
	alloc := func(id string, prio, cpu, mem int) *structs.Allocation {
		j := newJob("j-"+id, structs.JobTypeService, 1, cpu, mem)
		j.Priority = prio
		return &structs.Allocation{ID: id, Job: j, Resources: &structs.Resources{CPU: cpu, MemoryMB: mem}}
	}
	ids := func(as []*structs.Allocation) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	cases := []struct {
		name     string
		cands    []*structs.Allocation
		cpu, mem int64
		want     []string
	}{
		{"nothing needed", []*structs.Allocation{alloc("a", 10, 100, 100)}, 0, 0, nil},
		{"not enough", []*structs.Allocation{alloc("a", 10, 100, 100)}, 200, 0, nil},
		{"closest single fit", []*structs.Allocation{alloc("big", 10, 800, 800), alloc("fit", 10, 300, 300)}, 250, 250, []string{"fit"}},
		{"lowest priority first", []*structs.Allocation{alloc("p50", 50, 500, 500), alloc("p10", 10, 200, 200), alloc("p20", 20, 200, 200)}, 300, 300, []string{"p10", "p20"}},
		{"pruned", []*structs.Allocation{alloc("a", 10, 100, 100), alloc("b", 20, 500, 500)}, 400, 400, []string{"b"}},
		{"memory only", []*structs.Allocation{alloc("cpuheavy", 10, 900, 10), alloc("memheavy", 10, 10, 900)}, -100, 500, []string{"memheavy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ids(selectPreemptions(c.cands, c.cpu, c.mem))
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestServicesUpdated(t *testing.T) {
	base := func() *structs.TaskGroup {
		tg := newJob("web", structs.JobTypeService, 2, 100, 256).TaskGroups[0]
		tg.Services = []*structs.Service{{Name: "web", Provider: structs.ServiceProviderNomad, PortLabel: "http", Tags: []string{"v1"}}}
		return tg
	}
	cases := []struct {
		name   string
		change func(tg *structs.TaskGroup)
		want   bool
	}{
		{"nothing", func(*structs.TaskGroup) {}, false},
		{"count", func(tg *structs.TaskGroup) { tg.Count = 5 }, false},
		{"group service tags", func(tg *structs.TaskGroup) { tg.Services[0].Tags = []string{"v2"} }, true},
		{"group service check added", func(tg *structs.TaskGroup) {
			tg.Services[0].Checks = []*structs.ServiceCheck{{Name: "alive", Type: structs.ServiceCheckTCP, Interval: 10e9}}
		}, true},
		{"group service removed", func(tg *structs.TaskGroup) { tg.Services = nil }, true},
		{"task service added", func(tg *structs.TaskGroup) {
			tg.Tasks[0].Services = []*structs.Service{{Name: "api", Provider: structs.ServiceProviderNomad}}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new := base(), base()
			c.change(new)
			if got := servicesUpdated(old, new); got != c.want {
				t.Errorf("servicesUpdated = %v, want %v", got, c.want)
			}
			if tasksUpdated(old, new) {
				t.Errorf("tasksUpdated = true: a service change must stay in place")
			}
		})
	}
}
