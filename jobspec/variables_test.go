package jobspec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// optsJob declares the variables the table below sets from each source.
const optsJob = `variable "image" {
  type    = string
  default = "redis:6"
}

variable "count" {
  type    = number
  default = 1
  validation {
    condition     = var.count >= 1 && var.count <= 5
    error_message = "count must be between 1 and 5."
  }
}

variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}

locals {
  name = upper("${var.image}-x")
}

job "v" {
  datacenters = var.dcs
  meta {
    name = local.name
  }
  group "g" {
    count = var.count
    task "t" {
      driver = "docker"
      config {
        image = var.image
      }
    }
  }
}
`

func TestParseWithOptions(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		wantImage string
		wantCount int
		wantDCs   string
		wantMeta  string
		wantErr   string // "line:col: text" or text
	}{
		{name: "defaults", wantImage: "redis:6", wantCount: 1, wantDCs: "dc1", wantMeta: "REDIS:6-X"},
		{
			name:      "environment",
			opts:      Options{Env: map[string]string{"image": "redis:7", "count": "2", "undeclared": "ignored"}},
			wantImage: "redis:7", wantCount: 2, wantDCs: "dc1", wantMeta: "REDIS:7-X",
		},
		{
			name: "hcl var file over the environment",
			opts: Options{
				Env:      map[string]string{"image": "redis:7"},
				VarFiles: []VarFile{{Name: "prod.vars", Content: []byte("image = \"redis:8\"\ndcs = [\"a\", \"b\"]\n")}},
			},
			wantImage: "redis:8", wantCount: 1, wantDCs: "a,b", wantMeta: "REDIS:8-X",
		},
		{
			name:      "json var file",
			opts:      Options{VarFiles: []VarFile{{Name: "prod.json", Content: []byte(`{"count": 3, "dcs": ["j"]}`)}}},
			wantImage: "redis:6", wantCount: 3, wantDCs: "j", wantMeta: "REDIS:6-X",
		},
		{
			name: "later files and then flags win",
			opts: Options{
				VarFiles: []VarFile{
					{Name: "a.hcl", Content: []byte(`count = 2`)},
					{Name: "b.hcl", Content: []byte(`count = 4`)},
				},
				Vars: map[string]string{"count": "5"},
			},
			wantImage: "redis:6", wantCount: 5, wantDCs: "dc1", wantMeta: "REDIS:6-X",
		},
		{
			name:    "validation fails at the condition with its message",
			opts:    Options{Vars: map[string]string{"count": "9"}},
			wantErr: "job.hcl:10:21: Invalid value for variable: count must be between 1 and 5.",
		},
		{
			name:    "undeclared variable in a var file",
			opts:    Options{VarFiles: []VarFile{{Name: "x.hcl", Content: []byte("\nimag = \"a\"\n")}}},
			wantErr: `x.hcl:2:1: Undeclared variable: A value was given for variable "imag"`,
		},
		{
			name:    "malformed json var file",
			opts:    Options{VarFiles: []VarFile{{Name: "x.json", Content: []byte(`{"count": }`)}}},
			wantErr: "x.json:1:",
		},
		{
			name:    "environment value of the wrong type",
			opts:    Options{Env: map[string]string{"count": "many"}},
			wantErr: `NOMAD_VAR_count=many: "many" is not a valid number`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, err := ParseWithOptions("job.hcl", []byte(optsJob), tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				if job != nil {
					t.Errorf("a job was returned with the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tg := job.TaskGroups[0]
			if got := tg.Tasks[0].Config["image"]; got != tt.wantImage {
				t.Errorf("image = %v, want %s", got, tt.wantImage)
			}
			if *tg.Count != tt.wantCount {
				t.Errorf("count = %d, want %d", *tg.Count, tt.wantCount)
			}
			if got := strings.Join(job.Datacenters, ","); got != tt.wantDCs {
				t.Errorf("datacenters = %s, want %s", got, tt.wantDCs)
			}
			if got := job.Meta["name"]; got != tt.wantMeta {
				t.Errorf("meta name = %s, want %s", got, tt.wantMeta)
			}
		})
	}
}

func TestEnvVars(t *testing.T) {
	got := EnvVars([]string{"NOMAD_VAR_a=1", "NOMAD_VAR_b=x=y", "NOMAD_VAR_=z", "PATH=/bin", "NOMAD_ADDR=h"})
	if len(got) != 2 || got["a"] != "1" || got["b"] != "x=y" {
		t.Errorf("EnvVars = %v, want a=1 and b=x=y", got)
	}
}

func TestParseFunctions(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(cfg, []byte("port=8080\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr    string
		allowFS bool
		want    string // a regexp the value must match whole
		wantErr string
	}{
		{expr: `upper("a")`, want: "A"},
		{expr: `lower(format("%s-%d", "X", 3))`, want: "x-3"},
		{expr: `join(",", concat(["a"], split("-", "b-c")))`, want: "a,b,c"},
		{expr: `lookup(merge({a = "1"}, {b = "2"}), "b", "none")`, want: "2"},
		{expr: `tostring(length(range(4)))`, want: "4"},
		{expr: `jsonencode({a = [1, 2]})`, want: `\{"a":\[1,2\]\}`},
		{expr: `jsondecode("{\"k\":\"v\"}").k`, want: "v"},
		{expr: `base64encode("hello")`, want: "aGVsbG8="},
		{expr: `base64decode("aGVsbG8=")`, want: "hello"},
		{expr: `tostring(abs(-2) + ceil(1.2) + floor(1.8) + min(3, 4) + max(1, 2))`, want: "10"},
		{expr: `replace("a.b", ".", "_")`, want: "a_b"},
		{expr: `regex("[0-9]+", "ab123")`, want: "123"},
		{expr: `sha256("x")`, want: "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},
		{expr: `uuidv4()`, want: "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"},
		{expr: `timestamp()`, want: `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`},
		{expr: `trimspace(file("` + cfg + `"))`, allowFS: true, want: "port=8080"},
		{expr: `tostring(fileexists("` + cfg + `.missing"))`, allowFS: true, want: "false"},
		{expr: `file("` + cfg + `")`, wantErr: `Call to unknown function: There is no function named "file"`},
		{expr: `base64decode("%%%")`, wantErr: "not valid base64"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			src := "job \"f\" {\n  meta {\n    v = " + tt.expr + "\n  }\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n    }\n  }\n}\n"
			job, err := ParseWithOptions("f.hcl", []byte(src), Options{AllowFS: tt.allowFS})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "f.hcl:3:") {
					t.Fatalf("error = %v, want one at f.hcl:3 containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := job.Meta["v"]; !regexp.MustCompile("^(?:" + tt.want + ")$").MatchString(got) {
				t.Errorf("value = %q, want it to match %s", got, tt.want)
			}
		})
	}
}

func TestParseDynamic(t *testing.T) {
	src := `variable "mounts" {
  default = {
    data = "/srv/data"
    logs = "/srv/logs"
  }
}

variable "zones" {
  default = ["a", "b"]
}

job "d" {
  dynamic "constraint" {
    for_each = var.zones
    iterator = z
    content {
      attribute = "${meta.zone}"
      operator  = "!="
      value     = "zone-${z.value}-${z.key}"
    }
  }
  group "g" {
    dynamic "task" {
      for_each = ["web", "api"]
      labels   = [task.value]
      content {
        driver = "docker"
        config {
          image = "app:${task.value}"
          dynamic "mount" {
            for_each = var.mounts
            content {
              source = mount.value
              target = "/${mount.key}/${task.key}"
            }
          }
        }
      }
    }
  }
}
`
	job, err := ParseWithOptions("d.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cons []string
	for _, c := range job.Constraints {
		cons = append(cons, c.LTarget+" "+c.Operand+" "+c.RTarget)
	}
	if got, want := strings.Join(cons, "; "), "${meta.zone} != zone-a-0; ${meta.zone} != zone-b-1"; got != want {
		t.Errorf("constraints = %q, want %q", got, want)
	}
	tasks := job.TaskGroups[0].Tasks
	if len(tasks) != 2 || tasks[0].Name != "web" || tasks[1].Name != "api" {
		t.Fatalf("tasks = %+v, want web and api", tasks)
	}
	got, _ := json.Marshal(tasks[1].Config)
	want := `{"image":"app:api","mount":[{"source":"/srv/data","target":"/data/1"},{"source":"/srv/logs","target":"/logs/1"}]}`
	if string(got) != want {
		t.Errorf("api config = %s\nwant %s", got, want)
	}
}

func TestParseDynamicErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"no content", `dynamic "constraint" {
    for_each = [1]
  }`, `d.hcl:2:3: Invalid dynamic block: A dynamic block needs exactly one content`},
		{"for_each not a collection", `dynamic "constraint" {
    for_each = 3
    content {}
  }`, `d.hcl:3:16: Invalid for_each: for_each must be a list, set, map or object; got number`},
		{"bad iterator attribute", `dynamic "constraint" {
    for_each = ["a"]
    content {
      attribute = constraint.val
    }
  }`, `d.hcl:5:19: Unsupported attribute`},
		{"undefined variable", `dynamic "constraint" {
    for_each = var.nope
    content {}
  }`, `d.hcl:3:19: Unsupported attribute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "job \"d\" {\n  " + tt.body + "\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n    }\n  }\n}\n"
			job, err := ParseWithOptions("d.hcl", []byte(src), Options{})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v\nwant it to start with %q", err, tt.want)
			}
			if job != nil {
				t.Error("a job was returned with the error")
			}
		})
	}
}

func TestParseUndefinedVariablePosition(t *testing.T) {
	src := "job \"u\" {\n  group \"g\" {\n    count = var.replicas\n    task \"t\" {\n      driver = \"exec\"\n    }\n  }\n}\n"
	_, err := ParseRequest(&api.JobsParseRequest{JobHCL: src})
	if err == nil || !strings.HasPrefix(err.Error(), "job.nomad.hcl:3:16: Unsupported attribute") ||
		!strings.Contains(err.Error(), `"replicas"`) {
		t.Fatalf("error = %v, want one at 3:16 naming replicas", err)
	}
}

func TestParseScaling(t *testing.T) {
	src := `job "s" {
  group "g" {
    count = 2
    scaling {
      min     = 1
      max     = 10
      enabled = true
      policy {
        cooldown = "1m"
        check "cpu" {
          source = "prometheus"
        }
      }
    }
    task "t" {
      driver = "exec"
      scaling "cpu" {
        min = 100
        max = 500
      }
    }
  }
}
`
	job, err := Parse("s.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tg := job.TaskGroups[0]
	if want := `{"Enabled":true,"Max":10,"Min":1,"Policy":{"check":[{"cpu":[{"source":"prometheus"}]}],"cooldown":"1m"}}`; string(tg.Scaling) != want {
		t.Errorf("group scaling = %s\nwant %s", tg.Scaling, want)
	}
	if want := `[{"Max":500,"Min":100,"Type":"cpu"}]`; string(tg.Tasks[0].ScalingPolicies) != want {
		t.Errorf("task scaling = %s\nwant %s", tg.Tasks[0].ScalingPolicies, want)
	}
}
