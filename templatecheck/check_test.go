package templatecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, text, left, right string
		want                    string // "" for no problem; else "line:col: substring"
	}{
		{name: "plain text", text: "hello"},
		{name: "nomad functions", text: `{{ with nomadVar "nomad/jobs/web" }}{{ .password }}{{ end }}
{{ range nomadService "db" }}{{ .Address }}:{{ .Port }}{{ end }}
{{ env "NOMAD_TASK_NAME" | toUpper }} {{ "a,b" | split "," | toJSON }} {{ timestamp }}
{{ parseInt "42" }} {{ base64Encode "x" }} {{ sprig_upper "x" }}`},
		{name: "missing data is no error", text: `{{ parseInt (env "NOPE_NOT_SET") }}`},
		{name: "builtins", text: `{{ if and (eq 1 1) (not false) }}{{ printf "%s" (index (split "," "a,b") 0) | len }}{{ end }}{{ slice "abc" 1 }}{{ html "x" }}{{ call .F }}`},
		{name: "define and template", text: `{{ define "x" }}{{ . }}{{ end }}{{ template "x" "y" }}{{ block "b" . }}z{{ end }}`},
		{name: "unknown function", text: "a\nb {{ fooBar 1 }}", want: `2:6: function "fooBar" is not defined`},
		{name: "unclosed action", text: "line1\n  {{ .x ", want: "2:3: "},
		{name: "consul key", text: "x\n{{ key \"a/b\" }}", want: `2:4: function "key" reads Consul`},
		{name: "vault secret", text: `{{ with secret "kv/x" }}{{ .Data }}{{ end }}`, want: `1:9: function "secret" reads Vault`},
		{name: "custom delimiters", text: `[[ nomadVar "nomad/jobs/x" ]] {{ notAFunction }}`, left: "[[", right: "]]"},
		{name: "custom delimiters bad", text: `[[ nope ]]`, left: "[[", right: "]]", want: `1:4: function "nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := Check(tc.text, tc.left, tc.right)
			if tc.want == "" {
				if len(ps) != 0 {
					t.Fatalf("Check = %v, want no problem", ps)
				}
				return
			}
			if len(ps) == 0 || !strings.HasPrefix(ps[0].Error(), tc.want) {
				t.Fatalf("Check = %v, want one starting %q", ps, tc.want)
			}
		})
	}
}

// TestFunctionsMatchConsulTemplate reads consul-template's function map
// from the module's source and checks that the list the checker parses
// with is the same: a function missing there would refuse good templates.
func TestFunctionsMatchConsulTemplate(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/hashicorp/consul-template").Output()
	if err != nil {
		t.Fatalf("locate consul-template's source: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "template", "template.go"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	start := strings.Index(body, "\nfunc funcMap(")
	if start < 0 {
		t.Fatal("no funcMap in consul-template's template.go")
	}
	body = body[start:]
	body = body[:strings.Index(body, "\n}\n")]
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s+"([A-Za-z_0-9]+)":`).FindAllStringSubmatch(body, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if !slices.Equal(names, consulTemplateFunctions) {
		t.Errorf("consul-template's functions:\n%q\nthe checker's:\n%q", names, consulTemplateFunctions)
	}
}

// TestCheckRunsNothing: a template that would loop for a long time is
// only parsed.
func TestCheckRunsNothing(t *testing.T) {
	if ps := Check(`{{ range loop 1000000000000 }}{{ timestamp }}{{ end }}`, "", ""); len(ps) != 0 {
		t.Fatalf("Check = %v", ps)
	}
}
