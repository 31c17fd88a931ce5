package inputlimit

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestCheckHCL(t *testing.T) {
	blocks := func(n int) string { return strings.Repeat("a {\n", n) + strings.Repeat("}\n", n) }
	tests := []struct {
		name    string
		src     string
		max     int
		wantErr string // "" for no error
	}{
		{"job file", "job \"x\" {\n  group \"g\" {\n    task \"t\" {\n      config { args = [\"a\", \"${NOMAD_ALLOC_ID}\"] }\n    }\n  }\n}\n", 7, ""},
		{"blocks at the limit", blocks(5), 5, ""},
		{"blocks one too deep", blocks(6), 5, "f.hcl:6:3: Nesting too deep: blocks, brackets, strings, interpolations and chained operators may nest at most 5 levels deep"},
		{"lists", "a = [[[[1]]]]", 7, ""},
		{"lists too deep", "a = [[[[1]]]]", 3, "f.hcl:1:8:"},
		{"parentheses", "a = ((((1))))", 3, "f.hcl:1:8:"},
		{"function calls", "a = f(f(f(f(1))))", 3, "f.hcl:1:12:"},
		{"binary chain", "a = 1 + 1 + 1 + 1 + 1", 3, "f.hcl:1:19:"},
		{"binary chain split by commas", "a = [1 + 1, 1 + 1, 1 + 1, 1 + 1]", 3, ""},
		{"one chain per attribute", "a = 1 + 1 + 1\nb = 1 + 1 + 1\nc = 1 + 1 + 1\n", 3, ""},
		{"newlines inside a list do not end the chain", "a = [1 +\n1 +\n1 +\n1]", 3, "f.hcl:3:3:"},
		{"unary chain", "a = !!!!!true", 3, "f.hcl:1:8:"},
		{"negation chain", "a = - - - - 1", 3, "f.hcl:1:11:"},
		{"conditional chain", "a = x ? 1 : y ? 2 : z ? 3 : w ? 4 : 5", 3, "f.hcl:1:31:"},
		{"index chain", "a = f()[0][0][0]", 2, "f.hcl:1:11:"},
		{"comparison operators", "a = 1 <= 2 >= 3 == 4 != 5", 3, "f.hcl:1:22:"},
		{"identifiers with dashes", "a = some-long-name-with-dashes-everywhere", 1, ""},
		{"number exponent", "a = 1e-5", 1, ""},
		{"hash comment", "# {{{{{{ [[[[[ (((((\na = 1", 1, ""},
		{"slash comment", "// {{{{{{ [[[[[ (((((\na = 1", 1, ""},
		{"block comment", "/* {{{{{{\n[[[[[ ((((( */ a = 1", 1, ""},
		{"division is an operator", "a = 1 / 1 / 1 / 1", 2, "f.hcl:1:15:"},
		{"braces in strings", "a = \"{{{{ [[[[ ((((\"", 1, ""},
		{"escaped quote", "a = \"\\\" {{{{ \\\\\" \nb = 1", 1, ""},
		{"interpolation", "a = \"${f(1)}\"", 2, "f.hcl:1:9:"},
		{"nested interpolations", "a = \"${\"${\"${x}\"}\"}\"", 5, "f.hcl:1:12:"},
		{"escaped interpolation", "a = \"$${ %%{ {{{{\"", 1, ""},
		{"heredoc text", "a = <<EOT\n{{{{{ [[[[ ${x} \"\nEOT\nb = 1\n", 2, ""},
		{"heredoc interpolation", "a = <<EOT\n${f(g(h(1)))}\nEOT\n", 3, "f.hcl:2:6:"},
		{"indented heredoc", "a = <<-EOT\n  {{{{\n  EOT\nb = [[1]]\n", 4, ""},
		{"heredoc ends only at its marker", "a = <<EOT\nEOTX {{{{\n  EOT  \nb = [1]\n", 2, ""},
		{"unterminated heredoc", "a = <<EOT\n{{{{", 1, ""},
		{"shift is not a heredoc", "a = 1 << 2 << 3", 2, "f.hcl:1:12:"},
		{"directives nest", "a = \"%{if a}%{if b}%{if c}x%{endif}%{endif}%{endif}\"", 4, "f.hcl:1:20:"},
		{"sibling directives", "a = \"%{if a}x%{endif}%{if b}y%{endif}%{for c in d}z%{endfor}\"", 3, ""},
		{"stray closers", "}}}]]]))) a = [[1]]", 4, ""},
		{"object", "a = { b = { c = { d = 1 } } }", 2, "f.hcl:1:17:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHCL("f.hcl", []byte(tc.src), tc.max)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckHCL = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckHCL = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestCheckHCLIssueAttack: the job files, nested 40,000 and
// 120,000 levels deep, are refused by the scan before any parse.
func TestCheckHCLIssueAttack(t *testing.T) {
	for _, n := range []int{40_000, 120_000} {
		src := "job \"x\" {\n  meta = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n}\n"
		err := CheckHCL("job.hcl", []byte(src), MaxNesting)
		if err == nil || !strings.Contains(err.Error(), "job.hcl:2:") || !strings.Contains(err.Error(), "at most 100 levels") {
			t.Errorf("%d levels: CheckHCL = %v, want a nesting error at line 2", n, err)
		}
	}
}

// astDepth is the depth of the syntax tree of a parsed HCL file.
func astDepth(body hcl.Body) int {
	w := &depthWalker{}
	_ = hclsyntax.Walk(body.(*hclsyntax.Body), w)
	return w.deepest
}

type depthWalker struct{ depth, deepest int }

func (w *depthWalker) Enter(hclsyntax.Node) hcl.Diagnostics {
	w.depth++
	w.deepest = max(w.deepest, w.depth)
	return nil
}

func (w *depthWalker) Exit(hclsyntax.Node) hcl.Diagnostics {
	w.depth--
	return nil
}

// FuzzCheckHCL checks that CheckHCL bounds the parser's recursion: a file
// it accepts parses into a syntax tree at most a few times as deep as the
// limit (each level of the scan is at most three nodes: a block and its
// body, an object item and its key, ...), whatever the input. The limit is
// small here so that short inputs reach it.
func FuzzCheckHCL(f *testing.F) {
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    task \"t\" {\n      config { args = [\"${a}\"] }\n    }\n  }\n}\n"), 6)
	f.Add([]byte("a = <<EOT\n${f(g(h(1)))}\n%{if a}%{for x in y}${x}%{endfor}%{endif}\nEOT\n"), 4)
	f.Add([]byte("a = x ? 1 : y ? !!2 : -(3 + 4) * f()[0][1]\nb = \"${\"${1 + 2}\"}\"\n"), 5)
	f.Add([]byte("locals {\n a = [for k, v in x : k => v if v != null]\n b = {c = {d = [1, 2]}}\n}\n"), 5)
	f.Add([]byte(strings.Repeat("a {\n", 50)+strings.Repeat("}\n", 50)), 100)
	f.Add([]byte("a = ["+strings.Repeat("1,", 50000)+"1]\n"), 100) // wide
	f.Add([]byte("a = 1"+strings.Repeat(" + 1", 200)+"\n"), 100)
	f.Fuzz(func(t *testing.T, src []byte, limit int) {
		limit = 1 + int(uint(limit)%12)
		if err := CheckHCL("fuzz.hcl", src, limit); err != nil {
			if !IsLimit(err) {
				t.Fatalf("CheckHCL returned %T %v, want an *Error", err, err)
			}
			return
		}
		file, _ := hclsyntax.ParseConfig(src, "fuzz.hcl", hcl.InitialPos)
		if d := astDepth(file.Body); d > 3*limit+4 {
			t.Fatalf("CheckHCL accepted a file whose syntax tree is %d deep, limit %d:\n%s", d, limit, src)
		}
	})
}
