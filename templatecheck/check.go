package templatecheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template/parse"

	cttemplate "github.com/hashicorp/consul-template/template"
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
// or Vault function; nil when it is fine.
func Check(text, leftDelim, rightDelim string) []Problem {
	if leftDelim == "" {
		leftDelim = "{{"
	}
	if rightDelim == "" {
		rightDelim = "}}"
	}
	if p := parseProblem(text, leftDelim, rightDelim); p != nil {
		return []Problem{*p}
	}
	// The parse above checked the functions against consul-template's
	// own function map; this one finds the Consul and Vault calls (the
	// parse tree of the one above is not exposed).
	tr := parse.New("t")
	tr.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := tr.Parse(text, leftDelim, rightDelim, trees); err != nil {
		return []Problem{{Line: 1, Col: 1, Msg: err.Error()}}
	}
	var out []Problem
	for _, tr := range trees {
		walk(tr.Root, func(n *parse.IdentifierNode) {
			sys, ok := unsupported[n.Ident]
			if !ok {
				return
			}
			line, col := position(text, int(n.Pos))
			out = append(out, Problem{Line: line, Col: col, Msg: fmt.Sprintf(
				"function %q reads %s, which Drover does not support: use nomadVar or nomadService instead", n.Ident, sys)})
		})
	}
	return out
}

// parseProblem parses text as the client will (consul-template's function
// map), executing nothing that reads data: the brain is empty, so every
// data function returns its zero value.
func parseProblem(text, left, right string) *Problem {
	t, err := cttemplate.NewTemplate(&cttemplate.NewTemplateInput{
		Contents: text, LeftDelim: left, RightDelim: right,
		// Reading files is left to the client: a check never reads one.
		ReaderFunc: func(string) ([]byte, error) { return nil, fmt.Errorf("not read when checked") },
	})
	if err != nil {
		return &Problem{Line: 1, Col: 1, Msg: err.Error()}
	}
	_, err = t.Execute(&cttemplate.ExecuteInput{Brain: cttemplate.NewBrain(), Env: []string{}})
	if err == nil || !strings.HasPrefix(err.Error(), "parse: ") {
		return nil // an execution error depends on data the check has not
	}
	msg := strings.TrimPrefix(err.Error(), "parse: ")
	m := lineErr.FindStringSubmatch(msg)
	if m == nil {
		return &Problem{Line: 1, Col: 1, Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	p := &Problem{Line: line, Col: 1, Msg: m[2]}
	if f := undefinedFn.FindStringSubmatch(m[2]); f != nil {
		p.Msg = fmt.Sprintf("function %q is not defined: see docs/templates.md for the functions templates have", f[1])
		if sys, ok := unsupported[f[1]]; ok {
			p.Msg = fmt.Sprintf("function %q reads %s, which Drover does not support: use nomadVar or nomadService instead", f[1], sys)
		}
		p.Col = columnOf(text, line, f[1])
	} else {
		p.Col = columnOf(text, line, left)
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
