package templatecheck

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// Problem is one thing wrong with a template: where (1-based, in the
// template's own text) and what.
type Problem struct {
	Line, Col int
	Msg       string
}

// Error formats the problem as "line:col: message".
func (p Problem) Error() string { return fmt.Sprintf("%d:%d: %s", p.Line, p.Col, p.Msg) }

// unsupported are consul-template's functions that read Consul or Vault,
// which Drover does not integrate with, and what to use instead.
var unsupported = map[string]string{
	"key": "Consul", "keyExists": "Consul", "keyOrDefault": "Consul", "ls": "Consul",
	"safeLs": "Consul", "tree": "Consul", "safeTree": "Consul", "service": "Consul",
	"services": "Consul", "connect": "Consul", "node": "Consul", "nodes": "Consul",
	"datacenters": "Consul", "caRoots": "Consul", "caLeaf": "Consul", "partitions": "Consul",
	"peerings": "Consul", "exportedServices": "Consul",
	"secret": "Vault", "secrets": "Vault", "pkiCert": "Vault",
}

// Unsupported reports whether fn is a Consul or Vault function, and which.
func Unsupported(fn string) (string, bool) {
	s, ok := unsupported[fn]
	return s, ok
}

// lineErr matches text/template's parse errors: "template: NAME:LINE: msg".
var lineErr = regexp.MustCompile(`template: [^:]*:(\d+): (.*)$`)

// undefinedFn matches the parse error of an unknown function.
var undefinedFn = regexp.MustCompile(`function "([^"]+)" not defined`)

// Check parses text with the delimiters (empty: "{{" and "}}") and returns
// what is wrong with it: a syntax error, an unknown function, or a Consul
// or Vault function; nil when it is fine. It only parses: nothing in the
// template runs (a submitted template could loop for ever).
func Check(text, leftDelim, rightDelim string) []Problem {
	if leftDelim == "" {
		leftDelim = "{{"
	}
	if rightDelim == "" {
		rightDelim = "}}"
	}
	// text/template's Parse adds its own builtins (and, eq, printf, ...)
	// to the functions the parser knows.
	tmpl, err := template.New("t").Delims(leftDelim, rightDelim).Funcs(functionNames()).Parse(text)
	if err != nil {
		return []Problem{parseProblem(text, leftDelim, err)}
	}
	var out []Problem
	for _, tt := range tmpl.Templates() {
		if tt.Tree == nil {
			continue
		}
		walk(tt.Tree.Root, func(n *parse.IdentifierNode) {
			sys, ok := unsupported[n.Ident]
			if !ok {
				return
			}
			line, col := position(text, int(n.Pos))
			out = append(out, Problem{Line: line, Col: col, Msg: unsupportedMsg(n.Ident, sys)})
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Line < out[j].Line || out[i].Line == out[j].Line && out[i].Col < out[j].Col
	})
	return out
}

func unsupportedMsg(fn, sys string) string {
	return fmt.Sprintf("function %q reads %s, which Drover does not support: use nomadVar or nomadService instead", fn, sys)
}

// parseProblem turns a parse error ("template: t:LINE: msg") into a
// Problem, with the column of the unknown function, or of the line's first
// delimiter.
func parseProblem(text, left string, err error) Problem {
	msg := err.Error()
	m := lineErr.FindStringSubmatch(msg)
	if m == nil {
		return Problem{Line: 1, Col: 1, Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	p := Problem{Line: line, Col: columnOf(text, line, left), Msg: m[2]}
	if f := undefinedFn.FindStringSubmatch(m[2]); f != nil {
		p.Msg = fmt.Sprintf("function %q is not defined: see docs/templates.md for the functions templates have", f[1])
		p.Col = columnOf(text, line, f[1])
	}
	return p
}

// columnOf returns the 1-based column of the first word in the line (1 if
// it is not there).
func columnOf(text string, line int, word string) int {
	lines := strings.Split(text, "\n")
	if line < 1 || line > len(lines) {
		return 1
	}
	l := lines[line-1]
	for i := 0; i <= len(l)-len(word); i++ {
		if strings.HasPrefix(l[i:], word) {
			// A whole word: not the tail of a longer name.
			if word != "" && isIdent(word[0]) && i > 0 && isIdent(l[i-1]) {
				continue
			}
			return i + 1
		}
	}
	return 1
}

func isIdent(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// position turns a byte offset into a 1-based line and column.
func position(text string, off int) (int, int) {
	off = min(max(off, 0), len(text))
	before := text[:off]
	line := strings.Count(before, "\n") + 1
	col := off - strings.LastIndexByte(before, '\n')
	return line, col
}

// walk calls fn for every identifier (function name) under n.
func walk(n parse.Node, fn func(*parse.IdentifierNode)) {
	switch n := n.(type) {
	case nil:
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, fn)
		}
	case *parse.ActionNode:
		walk(n.Pipe, fn)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walk(c, fn)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, fn)
		}
	case *parse.IdentifierNode:
		fn(n)
	case *parse.ChainNode:
		walk(n.Node, fn)
	case *parse.IfNode:
		walk(n.Pipe, fn)
		walk(n.List, fn)
		walk(n.ElseList, fn)
	case *parse.RangeNode:
		walk(n.Pipe, fn)
		walk(n.List, fn)
		walk(n.ElseList, fn)
	case *parse.WithNode:
		walk(n.Pipe, fn)
		walk(n.List, fn)
		walk(n.ElseList, fn)
	case *parse.TemplateNode:
		walk(n.Pipe, fn)
	}
}
