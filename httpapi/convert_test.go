package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// minimalJob returns a job with one group of one mock_driver task; mutate
// changes it before conversion.
func minimalJob(mutate func(j *api.Job)) *api.Job {
	j := &api.Job{
		ID: api.String("web"),
		TaskGroups: []*api.TaskGroup{{
			Name: api.String("g"),
			Tasks: []*api.Task{{
				Name:   "t",
				Driver: "mock_driver",
				Config: map[string]any{"run_for": "10s"},
			}},
		}},
	}
	if mutate != nil {
		mutate(j)
	}
	return j
}

func TestConvertJob(t *testing.T) {
	serviceRestart := structs.DefaultRestartPolicy(structs.JobTypeService)
	tests := []struct {
		name    string
		in      *api.Job
		check   func(t *testing.T, j *structs.Job)
		warn    []string // substrings, one per expected warning
		wantErr []string // substrings of the error
	}{
		{
			name: "unset fields get defaults",
			in:   minimalJob(nil),
			check: func(t *testing.T, j *structs.Job) {
				tg := j.TaskGroups[0]
				task := tg.Tasks[0]
				eq(t, "ID", j.ID, "web")
				eq(t, "count", tg.Count, 1)
				eq(t, "group restart", *tg.RestartPolicy, *serviceRestart)
				eq(t, "task restart", *task.RestartPolicy, *serviceRestart)
				eq(t, "disk", *tg.EphemeralDisk, *structs.DefaultEphemeralDisk())
				eq(t, "resources", *task.Resources, *structs.DefaultResources())
				eq(t, "logs", *task.LogConfig, structs.LogConfig{MaxFiles: 10, MaxFileSizeMB: 10})
				eq(t, "config", task.Config["run_for"], any("10s"))
				if task.Lifecycle != nil {
					t.Errorf("lifecycle = %+v, want nil", task.Lifecycle)
				}
			},
		},
		{
			name: "set zero values are kept",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Count = api.Int(0)
				j.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{Sticky: api.Bool(true)}
			}),
			check: func(t *testing.T, j *structs.Job) {
				eq(t, "count", j.TaskGroups[0].Count, 0)
				eq(t, "disk", *j.TaskGroups[0].EphemeralDisk, structs.EphemeralDisk{Sticky: true, SizeMB: 300})
			},
		},
		{
			name: "task restart policy merged over the group's over the type default",
			in: minimalJob(func(j *api.Job) {
				j.Type = api.String("batch")
				j.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: api.Int(5), Mode: api.String("delay")}
				j.TaskGroups[0].Tasks[0].RestartPolicy = &api.RestartPolicy{Delay: api.Duration(time.Second)}
			}),
			check: func(t *testing.T, j *structs.Job) {
				tg := j.TaskGroups[0]
				eq(t, "group", *tg.RestartPolicy, structs.RestartPolicy{Attempts: 5, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: "delay"})
				eq(t, "task", *tg.Tasks[0].RestartPolicy, structs.RestartPolicy{Attempts: 5, Interval: 24 * time.Hour, Delay: time.Second, Mode: "delay"})
			},
		},
		{
			name: "durations, lifecycle, constraints, leader, kill signal",
			in: minimalJob(func(j *api.Job) {
				j.Constraints = []*api.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux"}}
				task := j.TaskGroups[0].Tasks[0]
				task.KillTimeout = api.Duration(3 * time.Second)
				task.KillSignal = "SIGINT"
				task.Leader = true
				task.Lifecycle = &api.TaskLifecycle{Hook: "prestart", Sidecar: true}
				task.Constraints = []*api.Constraint{{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Operand: "!="}}
			}),
			check: func(t *testing.T, j *structs.Job) {
				task := j.TaskGroups[0].Tasks[0]
				eq(t, "job constraint", *j.Constraints[0], structs.Constraint{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="})
				eq(t, "task constraint", *task.Constraints[0], structs.Constraint{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Operand: "!="})
				eq(t, "kill timeout", task.KillTimeout, 3*time.Second)
				eq(t, "kill signal", task.KillSignal, "SIGINT")
				eq(t, "leader", task.Leader, true)
				eq(t, "lifecycle", *task.Lifecycle, structs.TaskLifecycle{Hook: "prestart", Sidecar: true})
			},
		},
		{
			name: "empty lifecycle is no lifecycle",
			in:   minimalJob(func(j *api.Job) { j.TaskGroups[0].Tasks[0].Lifecycle = &api.TaskLifecycle{} }),
			check: func(t *testing.T, j *structs.Job) {
				if lc := j.TaskGroups[0].Tasks[0].Lifecycle; lc != nil {
					t.Errorf("lifecycle = %+v, want nil", lc)
				}
			},
		},
		{
			name: "logs enabled=false disables",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Tasks[0].LogConfig = &api.LogConfig{Enabled: api.Bool(false), MaxFiles: api.Int(3)}
			}),
			check: func(t *testing.T, j *structs.Job) {
				eq(t, "logs", *j.TaskGroups[0].Tasks[0].LogConfig, structs.LogConfig{MaxFiles: 3, MaxFileSizeMB: 10, Disabled: true})
			},
		},
		{
			name: "logs disabled wins over enabled",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Tasks[0].LogConfig = &api.LogConfig{Enabled: api.Bool(false), Disabled: api.Bool(false)}
			}),
			check: func(t *testing.T, j *structs.Job) {
				eq(t, "disabled", j.TaskGroups[0].Tasks[0].LogConfig.Disabled, false)
			},
		},
		{
			name: "cores without cpu reserves no MHz",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Tasks[0].Resources = &api.Resources{Cores: api.Int(2), MemoryMB: api.Int(64)}
			}),
			check: func(t *testing.T, j *structs.Job) {
				eq(t, "resources", *j.TaskGroups[0].Tasks[0].Resources, structs.Resources{Cores: 2, MemoryMB: 64})
			},
		},
		{
			name: "null and zero unimplemented fields are accepted silently",
			in: minimalJob(func(j *api.Job) {
				j.Migrate = json.RawMessage("{}")
				j.Dispatched = false
				j.NodePool = json.RawMessage(`"default"`)
				j.TaskGroups[0].Consul = json.RawMessage(`{"Namespace": "", "Cluster": null}`)
				j.TaskGroups[0].ShutdownDelay = json.RawMessage("0")
				j.TaskGroups[0].Tasks[0].Kind = json.RawMessage(`""`)
				j.TaskGroups[0].Tasks[0].Resources = &api.Resources{Devices: json.RawMessage("null")}
			}),
		},
		{
			name: "harmless unimplemented fields warn",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Services = []*api.Service{{Name: "web", Provider: "nomad", TaggedAddresses: json.RawMessage(`{"lan": "1.2.3.4"}`)}}
				j.TaskGroups[0].Tasks[0].ShutdownDelay = json.RawMessage("5000000000")
			}),
			warn: []string{
				`group "g", service "web": TaggedAddresses (tagged_addresses)`,
				`group "g", task "t": ShutdownDelay (shutdown_delay)`,
			},
		},
		{
			name: "semantics-changing unimplemented fields are errors, all reported",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].MaxRunDuration = json.RawMessage(`60000000000`)
				j.TaskGroups[0].Tasks[0].Resources = &api.Resources{NUMA: json.RawMessage(`{"Affinity": "require"}`)}
			}),
			wantErr: []string{
				`group "g": MaxRunDuration (max_run_duration) is not supported by drover yet`,
				`group "g", task "t" resources: NUMA (numa block) is not supported by drover yet`,
			},
		},
		{
			name: "templates: converted with Nomad's defaults, parsed",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*api.Template{{
					EmbeddedTmpl: api.String(`{{ with nomadVar "nomad/jobs/web" }}{{ .pw }}{{ end }}`),
					DestPath:     api.String("local/a"), Envvars: api.Bool(true),
				}}
			}),
			check: func(t *testing.T, j *structs.Job) {
				tm := j.TaskGroups[0].Tasks[0].Templates[0]
				if tm.Splay != 5*time.Second || !tm.Envvars || tm.DestPath != "local/a" {
					t.Errorf("template = %+v", tm)
				}
			},
		},
		{
			name: "templates: bad syntax and Consul functions are refused",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*api.Template{
					{EmbeddedTmpl: api.String("ok\n{{ nope }}"), DestPath: api.String("local/a")},
					{EmbeddedTmpl: api.String(`{{ key "x" }}`), DestPath: api.String("local/b")},
				}
			}),
			wantErr: []string{
				`template 1 (local/a): 2:4: function "nope" is not defined`,
				`template 2 (local/b): 1:4: function "key" reads Consul`,
			},
		},
		{
			name: "affinities and spreads at every level, with Nomad's defaults",
			in: minimalJob(func(j *api.Job) {
				j.Affinities = []*api.Affinity{{LTarget: "${meta.rack}", RTarget: "r1"}}
				j.Spreads = []*api.Spread{{Attribute: "${meta.rack}", SpreadTarget: []*api.SpreadTarget{{Value: "r1", Percent: 70}}}}
				j.TaskGroups[0].Affinities = []*api.Affinity{{LTarget: "${node.class}", Operand: "!=", RTarget: "small", Weight: api.Int(-30)}}
				j.TaskGroups[0].Spreads = []*api.Spread{{Attribute: "${node.datacenter}", Weight: api.Int(100)}}
				j.TaskGroups[0].Tasks[0].Affinities = []*api.Affinity{{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Weight: api.Int(10)}}
			}),
			check: func(t *testing.T, j *structs.Job) {
				eq(t, "job affinity", *j.Affinities[0], structs.Affinity{LTarget: "${meta.rack}", RTarget: "r1", Operand: "=", Weight: 50})
				eq(t, "job spread", j.Spreads[0].String(), "spread ${meta.rack} weight 50 r1=70%")
				eq(t, "group affinity", *j.TaskGroups[0].Affinities[0], structs.Affinity{LTarget: "${node.class}", RTarget: "small", Operand: "!=", Weight: -30})
				eq(t, "group spread", j.TaskGroups[0].Spreads[0].String(), "spread ${node.datacenter} weight 100")
				eq(t, "task affinity", *j.TaskGroups[0].Tasks[0].Affinities[0], structs.Affinity{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Operand: "=", Weight: 10})
			},
		},
		{
			name: "null affinity and spread entries",
			in: minimalJob(func(j *api.Job) {
				j.Affinities = []*api.Affinity{nil}
				j.TaskGroups[0].Spreads = []*api.Spread{{Attribute: "${meta.rack}", SpreadTarget: []*api.SpreadTarget{nil}}}
			}),
			wantErr: []string{"job: affinity 1 is null", `group "g": spread ${meta.rack}: target 1 is null`},
		},
		{
			name:    "explicit priority 0 is out of range",
			in:      minimalJob(func(j *api.Job) { j.Priority = api.Int(0) }),
			wantErr: []string{"job priority 0 is out of range [1, 100]"},
		},
		{
			name:    "ID with a space",
			in:      minimalJob(func(j *api.Job) { j.ID = api.String("my job") }),
			wantErr: []string{`job ID "my job" must not contain spaces`},
		},
		{
			name:    "null group",
			in:      minimalJob(func(j *api.Job) { j.TaskGroups = append(j.TaskGroups, nil) }),
			wantErr: []string{"group 2 is null"},
		},
		{
			name: "bad log and resource values",
			in: minimalJob(func(j *api.Job) {
				j.TaskGroups[0].Tasks[0].LogConfig = &api.LogConfig{MaxFiles: api.Int(0)}
				j.TaskGroups[0].Tasks[0].Resources = &api.Resources{MemoryMB: api.Int(256), MemoryMaxMB: api.Int(128)}
			}),
			wantErr: []string{"max_files and max_file_size must be at least 1", "memory_max 128 MB is below memory 256 MB"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := ConvertJob(tc.in)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ConvertJob succeeded, want an error containing %q", tc.wantErr)
				}
				if k := structs.KindOf(err); k != structs.KindInvalid {
					t.Errorf("error kind = %v, want invalid", k)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ConvertJob: %v", err)
			}
			if len(warnings) != len(tc.warn) {
				t.Fatalf("warnings = %q, want %d matching %q", warnings, len(tc.warn), tc.warn)
			}
			for i, want := range tc.warn {
				if !strings.Contains(warnings[i], want) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], want)
				}
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			// The converted job must be one the server accepts.
			got.Canonicalize()
			if err := got.Validate(); err != nil {
				t.Errorf("converted job does not validate: %v", err)
			}
		})
	}
}

func TestConvertJobNil(t *testing.T) {
	if _, _, err := ConvertJob(nil); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("ConvertJob(nil) error = %v, want an invalid-kind error", err)
	}
}

func TestIsUnsetJSON(t *testing.T) {
	tests := []struct {
		raw  string
		want bool
	}{
		{"", true}, {"null", true}, {"false", true}, {"0", true}, {"0.0", true}, {`""`, true},
		{"[]", true}, {"{}", true}, {` {"A": null, "B": {"C": 0}} `, true},
		{"true", false}, {"1", false}, {`"x"`, false}, {"[null]", false}, {`{"A": 1}`, false},
		{"{not json", false},
	}
	for _, tc := range tests {
		if got := isUnsetJSON(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("isUnsetJSON(%q) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

// TestNomadJobDecodes checks that every field Nomad's Go client sends, for
// a job it built and canonicalized itself, decodes into api.Job with unknown
// fields disallowed, and that the conversion accepts it with warnings only.
func TestNomadJobDecodes(t *testing.T) {
	task := nomad.NewTask("t", "mock_driver").
		SetConfig("run_for", "10s").
		Require(&nomad.Resources{CPU: new(100), MemoryMB: new(64)}).
		SetLogConfig(&nomad.LogConfig{MaxFiles: new(2)})
	group := nomad.NewTaskGroup("g", 2).AddTask(task)
	job := nomad.NewServiceJob("web", "web", "global", 50).AddTaskGroup(group).AddDatacenter("dc1")
	job.Canonicalize()

	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(&nomad.JobRegisterRequest{Job: job}); err != nil {
		t.Fatal(err)
	}
	var req api.JobRegisterRequest
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("decode Nomad's JSON: %v", err)
	}
	got, warnings, err := ConvertJob(req.Job)
	if err != nil {
		t.Fatalf("ConvertJob of a canonicalized Nomad job: %v", err)
	}
	t.Logf("warnings: %q", warnings)
	eq(t, "count", got.TaskGroups[0].Count, 2)
	eq(t, "logs", *got.TaskGroups[0].Tasks[0].LogConfig, structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 10})
	eq(t, "memory", got.TaskGroups[0].Tasks[0].Resources.MemoryMB, 64)
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}
