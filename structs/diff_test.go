package structs

import (
	"testing"
	"time"
)

func diffJob() *Job {
	j := &Job{ID: "web", Priority: 50, Datacenters: []string{"dc1"}, TaskGroups: []*TaskGroup{{
		Name: "g", Count: 1,
		Tasks: []*Task{{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s", "args": []any{"a"}},
			Resources: &Resources{CPU: 100, MemoryMB: 64}}},
	}}}
	j.Canonicalize()
	return j
}

func TestDiffJobs(t *testing.T) {
	cases := []struct {
		name   string
		change func(j *Job)
		check  func(t *testing.T, d *JobDiff)
	}{
		{"unchanged", func(*Job) {}, func(t *testing.T, d *JobDiff) {
			if d.Type != DiffTypeNone || len(d.Fields) != 0 || d.TaskGroups[0].Type != DiffTypeNone {
				t.Errorf("diff %+v", d)
			}
		}},
		{"priority", func(j *Job) { j.Priority = 80 }, func(t *testing.T, d *JobDiff) {
			f := d.Fields
			if d.Type != DiffTypeEdited || len(f) != 1 || f[0].Name != "Priority" || f[0].Old != "50" || f[0].New != "80" {
				t.Errorf("fields %+v", f)
			}
		}},
		{"count", func(j *Job) { j.TaskGroups[0].Count = 3 }, func(t *testing.T, d *JobDiff) {
			g := d.TaskGroups[0]
			if g.Type != DiffTypeEdited || len(g.Fields) != 1 || g.Fields[0].Name != "Count" || len(g.Tasks[0].Annotations) != 0 {
				t.Errorf("group %+v", g)
			}
		}},
		{"config and env", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Config["run_for"] = "2s"
			j.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "1"}
		}, func(t *testing.T, d *JobDiff) {
			task := d.TaskGroups[0].Tasks[0]
			if task.Type != DiffTypeEdited || task.Annotations[0] != AnnotationForcesDestructiveUpdate {
				t.Fatalf("task %+v", task)
			}
			if len(task.Fields) != 1 || task.Fields[0].Name != "Env[A]" || task.Fields[0].Type != DiffTypeAdded {
				t.Errorf("fields %+v", task.Fields)
			}
			if len(task.Objects) != 1 || task.Objects[0].Name != "Config" || task.Objects[0].Fields[0].New != "2s" {
				t.Errorf("objects %+v", task.Objects)
			}
		}},
		{"network mode", func(j *Job) {
			j.TaskGroups[0].Networks = []*NetworkResource{{Mode: NetworkModeNone}}
		}, func(t *testing.T, d *JobDiff) {
			o := d.TaskGroups[0].Objects
			if len(o) != 1 || o[0].Name != "Network" || o[0].Type != DiffTypeAdded || o[0].Fields[0].Name != "Mode" || o[0].Fields[0].New != "none" {
				t.Fatalf("group objects %+v", o)
			}
		}},
		{"update block added", func(j *Job) { j.Update = DefaultUpdateStrategy() }, func(t *testing.T, d *JobDiff) {
			if len(d.Objects) != 1 || d.Objects[0].Type != DiffTypeAdded || d.Objects[0].Name != "Update" {
				t.Fatalf("objects %+v", d.Objects)
			}
			for _, f := range d.Objects[0].Fields {
				if f.Name == "MinHealthyTime" && f.New != "10000000000" {
					t.Errorf("MinHealthyTime %q", f.New)
				}
			}
		}},
		{"task and group added", func(j *Job) {
			j.TaskGroups[0].Tasks = append(j.TaskGroups[0].Tasks, &Task{Name: "side", Driver: "mock", KillTimeout: time.Second})
			j.TaskGroups = append(j.TaskGroups, &TaskGroup{Name: "new", Count: 1})
		}, func(t *testing.T, d *JobDiff) {
			if d.TaskGroups[0].Tasks[1].Type != DiffTypeAdded || d.TaskGroups[0].Tasks[1].Annotations[0] != AnnotationForcesCreate {
				t.Errorf("task %+v", d.TaskGroups[0].Tasks[1])
			}
			if d.TaskGroups[1].Type != DiffTypeAdded {
				t.Errorf("group %+v", d.TaskGroups[1])
			}
		}},
		{"constraint", func(j *Job) {
			j.Constraints = []*Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
		}, func(t *testing.T, d *JobDiff) {
			if len(d.Objects) != 1 || d.Objects[0].Name != "Constraints" || d.Objects[0].Objects[0].Type != DiffTypeAdded {
				t.Errorf("objects %+v", d.Objects)
			}
		}},
		{"spread target changed and affinity added", func(j *Job) {
			j.TaskGroups[0].Spreads = []*Spread{{Attribute: "${meta.rack}", Weight: 50, SpreadTarget: []*SpreadTarget{{"r1", 60}}}}
			j.TaskGroups[0].Tasks[0].Affinities = []*Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: 20}}
		}, func(t *testing.T, d *JobDiff) {
			g := d.TaskGroups[0]
			if g.Type != DiffTypeEdited || len(g.Objects) != 1 || g.Objects[0].Name != "Spreads" {
				t.Fatalf("group objects %+v", g.Objects)
			}
			fields := map[string]string{}
			for _, f := range g.Objects[0].Objects[0].Fields {
				fields[f.Name] = f.New
			}
			if fields["Attribute"] != "${meta.rack}" || fields["SpreadTarget[r1]"] != "60" || fields["Weight"] != "50" {
				t.Errorf("spread fields %v", fields)
			}
			task := g.Tasks[0]
			if len(task.Objects) != 1 || task.Objects[0].Name != "Affinities" || task.Annotations[0] != AnnotationForcesDestructiveUpdate {
				t.Errorf("task %+v", task)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, new := diffJob(), diffJob()
			c.change(new)
			c.check(t, DiffJobs(old, new))
		})
	}
	if d := DiffJobs(nil, diffJob()); d.Type != DiffTypeAdded || d.TaskGroups[0].Type != DiffTypeAdded {
		t.Errorf("added job: %+v", d)
	}
	if d := DiffJobs(diffJob(), nil); d.Type != DiffTypeDeleted {
		t.Errorf("deleted job: %+v", d)
	}
}
