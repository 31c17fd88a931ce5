package jobspec

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// localsFile is a job file whose locals block holds lines, and whose job
// uses local.out in its meta.
func localsFile(lines ...string) string {
	return "locals {\n" + strings.Join(lines, "\n") + "\n}\n" +
		`job "x" {
  meta = { out = jsonencode(local.out) }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
`
}

// doubling is n locals, each twice the previous one.
func doubling(n int, double string) []string {
	lines := []string{`a0 = "0123456789abcdef"`}
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf("a%d = "+double, i, i-1, i-1))
	}
	return append(lines, fmt.Sprintf("out = local.a%d", n))
}

func TestParseMetersEvaluation(t *testing.T) {
	list := "[" + strings.Repeat("1,", 5000) + "1]"
	deepLocals := []string{"d0 = 1"}
	for i := 1; i <= 150; i++ {
		deepLocals = append(deepLocals, fmt.Sprintf("d%d = [local.d%d]", i, i-1))
	}
	deepLocals = append(deepLocals, "out = local.d150")

	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"strings doubled by templates", doubling(40, `"${local.a%d}${local.a%d}"`), "Job file computes too much"},
		{"lists doubled by concat", doubling(40, `concat([local.a%d], [local.a%d])`), "Job file computes too much"},
		{"objects doubled", doubling(40, `{x = local.a%d, y = local.a%d}`), "Job file computes too much"},
		{"indent", []string{`out = indent(1000000000, "a\nb")`}, `Call to function "indent" failed: the job file computes more than 16 MiB`},
		{"format width", []string{`out = format("%900000000d", 1)`}, `Call to function "format" failed`},
		{"formatlist", []string{`out = formatlist("%90000d", range(1000))`}, `Call to function "formatlist" failed`},
		{"join", []string{`s = "` + strings.Repeat("x", 100_000) + `"`, `out = join(local.s, range(1000))`}, `Call to function "join" failed`},
		{"replace between every byte", []string{`s = "` + strings.Repeat("x", 10_000) + `"`, `out = replace(local.s, "", local.s)`}, `Call to function "replace" failed`},
		{"setproduct", []string{`l = range(100)`, `out = setproduct(local.l, local.l, local.l, local.l)`}, `Call to function "setproduct" failed`},
		{"nested for", []string{"out = [for x in " + list + ": [for y in " + list + ": 1]]"}, "Job file computes too much"},
		{"for with a large body", []string{"out = [for x in range(1000): {" + strings.Repeat("a = 1, ", 2000) + "}]"}, "Job file computes too much"},
		{"splat in a loop", []string{"l = " + list, "out = [for x in range(1000): [for y in range(1000): local.l[*]]]"}, "Job file computes too much"},
		{"comparisons in a loop", []string{"l = " + list, "out = [for x in range(1000): [for y in range(100): local.l == local.l]]"}, "Job file computes too much"},
		{"long tuple converted for a function", []string{"l = [" + strings.Repeat(`"a",`, 10000) + "]", `out = join(",", local.l)`}, `Call to function "join" failed`},
		{"long tuple converted for a conditional", []string{"l = [" + strings.Repeat(`"a",`, 10000) + "]", `out = true ? local.l : tolist(["b"])`}, "Job file computes too much"},
		{"swallowed by try", doubling(40, `try("${local.a%d}${local.a%d}", "")`), "Job file computes too much"},
		{"deep JSON for jsondecode", []string{`out = jsondecode("` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `")`}, "Nesting too deep"},
		{"value nested too deep through locals", deepLocals, "Value nested too deep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			job, err := Parse("bomb.hcl", []byte(localsFile(tc.lines...)))
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, %v; want an error containing %q", job, err, tc.want)
			}
			// Bounded by construction (MaxEvalBytes); the factor is the
			// overhead of cty values over the bytes charged.
			if got := after.TotalAlloc - before.TotalAlloc; got > 20*MaxEvalBytes {
				t.Errorf("Parse allocated %d MiB, want at most %d", got>>20, 20*MaxEvalBytes>>20)
			}
		})
	}
}

// TestParseAllowsOrdinaryComputation: what real job files compute stays
// far within the budget.
func TestParseAllowsOrdinaryComputation(t *testing.T) {
	src := localsFile(
		`dcs = ["dc1", "dc2", "dc3"]`,
		`ports = { for i, p in range(8000, 8100) : "p${i}" => p }`,
		`words = [for w in split(",", "a,b,c,d") : upper(w) if w != "b"]`,
		`tmpl = <<EOT
%{ for dc in local.dcs ~}
server ${dc}.example.com:${local.ports["p1"]}
%{ endfor ~}
EOT`,
		`big = join("\n", [for i in range(1000) : format("line %04d: %s", i, local.tmpl)])`,
		`out = { dcs = local.dcs, ports = local.ports, words = local.words, n = length(split("\n", local.big)) }`,
	)
	job, err := Parse("ok.hcl", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !strings.Contains(job.Meta["out"], `"words":["A","C","D"]`) {
		t.Errorf("meta out = %s", job.Meta["out"])
	}
}

// TestParseMetersConversion: converting a long tuple to a list costs the
// square of its length in cty (10,000 strings took 3.5 s); a job file
// whose list attribute is that long is refused before the conversion.
func TestParseMetersConversion(t *testing.T) {
	src := "job \"x\" {\n  datacenters = [" + strings.Repeat(`"dc",`, 10000) + "]\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n    }\n  }\n}\n"
	_, err := Parse("wide.hcl", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "wide.hcl:2:17: Job file computes too much") {
		t.Fatalf("Parse = %v, want the budget error at the list", err)
	}
}
