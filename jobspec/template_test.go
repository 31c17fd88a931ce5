package jobspec

import (
	"strings"
	"testing"
)

func TestParseTemplateChecked(t *testing.T) {
	job := func(tmpl string) string {
		return `job "web" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
` + tmpl + `
    }
  }
}
`
	}
	cases := []struct {
		name, tmpl string
		want       string // "" for none
	}{
		{name: "good heredoc", tmpl: `      template {
        data = <<EOF
{{ with nomadVar "nomad/jobs/web" }}{{ .pw }}{{ end }}
EOF
        destination = "local/a"
      }`},
		{name: "unknown function in heredoc", tmpl: `      template {
        data = <<EOF
first line
x={{ nomadVarr "nomad/jobs/web" }}
EOF
        destination = "local/a"
      }`, want: `web.hcl:9:6: Invalid template: function "nomadVarr" is not defined`},
		{name: "consul function in quoted string", tmpl: `      template {
        data        = "v={{ key \"a\" }}"
        destination = "local/a"
      }`, want: `web.hcl:7:29: Invalid template: function "key" reads Consul`},
		{name: "if without end", tmpl: `      template {
        data = <<EOF
ok
{{ if true }}
EOF
        destination = "local/a"
      }`, want: `web.hcl:10:1: Invalid template: unexpected EOF`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Parse("web.hcl", []byte(job(tc.tmpl)))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				tm := j.TaskGroups[0].Tasks[0].Templates
				if len(tm) != 1 || *tm[0].DestPath != "local/a" {
					t.Fatalf("Templates = %+v", tm)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
