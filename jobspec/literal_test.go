package jobspec

import (
	"fmt"
	"strings"
	"testing"
)

// TestInterpolationKeptLiterally checks, one expression at a time, which
// references HCL evaluates (var, local, functions) and which stay as text
// for the scheduler or the client.
func TestInterpolationKeptLiterally(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{`"${attr.kernel.name}"`, "${attr.kernel.name}"},
		{`"${node.datacenter}"`, "${node.datacenter}"},
		{`"${meta.foo}"`, "${meta.foo}"},
		{`"${NOMAD_ALLOC_ID}"`, "${NOMAD_ALLOC_ID}"},
		{`"${env["X"]}"`, `${env["X"]}`},
		{`"${attr.platform.aws.placement["availability-zone"]}"`, `${attr.platform.aws.placement["availability-zone"]}`},
		{`"a-${node.unique.name}-b"`, "a-${node.unique.name}-b"},
		{`"${var.v}/${NOMAD_TASK_DIR}"`, "V/${NOMAD_TASK_DIR}"},
		{`"${local.l}"`, "L"},
		{`"${upper(var.v)}"`, "V"},
		{`"${var.n}"`, "3"},
		{`"%{ if var.n > 2 }big-${attr.x}%{ else }small%{ endif }"`, "big-${attr.x}"},
		{`attr.kernel.name`, "${attr.kernel.name}"},
		{`"$${attr.x}"`, "${attr.x}"},
		{`join(",", [for s in ["a", "b"] : "${s}-${node.class}"])`, "a-${node.class},b-${node.class}"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			src := fmt.Sprintf(`
variable "v" { default = "v" }
variable "n" { default = 3 }
locals { l = "L" }
job "j" {
  group "g" {
    task "t" {
      driver = "exec"
      env { X = %s }
    }
  }
}
`, tt.expr)
			// upper(var.v) aside, var.v is "v"; make the expectation readable.
			src = strings.Replace(src, `default = "v"`, `default = "V"`, 1)
			job, err := Parse("lit.hcl", []byte(src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := job.TaskGroups[0].Tasks[0].Env["X"]; got != tt.want {
				t.Errorf("X = %q, want %q", got, tt.want)
			}
		})
	}
}
