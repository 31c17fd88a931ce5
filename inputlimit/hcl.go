package inputlimit

import (
	"bytes"
	"fmt"
)

// CheckHCL refuses an HCL document in native syntax (a job file, a
// variable file, an agent configuration, or a single expression such as a
// -var value) that nests deeper than max levels, with an *Error giving the
// line and column where it does. It checks nesting only: malformed HCL is
// left to the parser to report.
//
// A level is what makes HCL's parser recurse: a block or object brace, a
// list bracket, a parenthesis, a quoted string or heredoc, an
// interpolation (${ }) or directive (%{ }), an if or for directive nested
// in a template, and each operator chained in one expression (a + b + c,
// !!x, a ? b : c ? d : e, x[0][0]), since each is a level of the parsed
// expression tree. Operators are counted per expression: a comma, an
// equals sign, or a newline in a body or object ends one. The scan is
// linear and keeps one small frame per open level; it understands
// comments, escapes and heredocs, so brackets inside them do not count.
func CheckHCL(filename string, src []byte, max int) error {
	s := hclScanner{src: src, max: max, frames: make([]hclFrame, 1, 16)}
	if off := s.scan(); off >= 0 {
		line, col := lineCol(src, off)
		return &Error{Filename: filename, Line: line, Column: col, Summary: "Nesting too deep",
			Detail: fmt.Sprintf("blocks, brackets, strings, interpolations and chained operators may nest at most %d levels deep; flatten this part", max)}
	}
	return nil
}

type hclFrameKind uint8

const (
	hclFile hclFrameKind = iota // the document's top level, never popped
	hclBrace
	hclBracket
	hclParen
	hclInterp // ${ ... } or %{ ... }
	hclQuote
	hclHeredoc
)

type hclFrame struct {
	kind hclFrameKind
	// ops counts the operators chained in the expression being read at
	// this level (for quotes and heredocs: the if and for directives
	// open in the template).
	ops int
	// heredoc only: its closing marker, and whether the scan is at the
	// start of one of its lines.
	marker    []byte
	lineStart bool
}

type hclScanner struct {
	src    []byte
	max    int
	frames []hclFrame
	ops    int // the sum of every frame's ops
	// term: the last token ended a term (a name, a number, a closing
	// bracket or quote), so that a [ after it is an index, not a list.
	term bool
}

// depth is the nesting depth: open frames plus chained operators.
func (s *hclScanner) depth() int { return len(s.frames) - 1 + s.ops }

func (s *hclScanner) top() *hclFrame { return &s.frames[len(s.frames)-1] }

func (s *hclScanner) push(f hclFrame) bool {
	s.frames = append(s.frames, f)
	return s.depth() <= s.max
}

func (s *hclScanner) pop() {
	s.ops -= s.top().ops
	s.frames = s.frames[:len(s.frames)-1]
}

func (s *hclScanner) op() bool {
	s.top().ops++
	s.ops++
	return s.depth() <= s.max
}

// endExpr starts a new expression at the current level.
func (s *hclScanner) endExpr() {
	s.ops -= s.top().ops
	s.top().ops = 0
}

func (s *hclScanner) at(i int) byte {
	if i < len(s.src) {
		return s.src[i]
	}
	return 0
}

// scan returns the offset where the limit is crossed, or -1.
func (s *hclScanner) scan() int {
	i := 0
	for i < len(s.src) {
		var next int
		var ok bool
		switch s.top().kind {
		case hclQuote, hclHeredoc:
			next, ok = s.template(i)
		default:
			next, ok = s.expr(i)
		}
		if !ok {
			return i
		}
		i = next
	}
	return -1
}

// expr reads one token in expression context at i; it returns where the
// next one starts, and false when the token crosses the limit.
func (s *hclScanner) expr(i int) (int, bool) {
	c := s.src[i]
	term := s.term
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		return i + 1, true
	case c == '#' || c == '/' && s.at(i+1) == '/':
		return s.lineEnd(i), true // a comment; the newline ending it counts
	case c == '/' && s.at(i+1) == '*':
		if end := bytes.Index(s.src[i+2:], []byte("*/")); end >= 0 {
			return i + 2 + end + 2, true
		}
		return len(s.src), true
	case c == ')' || c == ']' || c == '}':
		s.term = true
	default:
		s.term = false
	}
	switch c {
	case '\n':
		if k := s.top().kind; k == hclFile || k == hclBrace {
			s.endExpr()
		}
		return i + 1, true
	case '"':
		return i + 1, s.push(hclFrame{kind: hclQuote})
	case '<':
		if marker, next := s.heredocIntro(i); marker != nil {
			return next, s.push(hclFrame{kind: hclHeredoc, marker: marker, lineStart: true})
		}
		if s.at(i+1) == '=' {
			return i + 2, s.op()
		}
		return i + 1, s.op()
	case '{':
		return i + 1, s.push(hclFrame{kind: hclBrace})
	case '[':
		if term && !s.op() { // an index: one more level of the expression
			return i, false
		}
		return i + 1, s.push(hclFrame{kind: hclBracket})
	case '(':
		return i + 1, s.push(hclFrame{kind: hclParen})
	case '}':
		if k := s.top().kind; k == hclBrace || k == hclInterp {
			s.pop()
		}
	case ']':
		if s.top().kind == hclBracket {
			s.pop()
		}
	case ')':
		if s.top().kind == hclParen {
			s.pop()
		}
	case ',':
		s.endExpr()
	case '=':
		switch s.at(i + 1) {
		case '=':
			return i + 2, s.op()
		case '>':
			return i + 2, true
		}
		s.endExpr()
	case '!', '>':
		if s.at(i+1) == '=' {
			return i + 2, s.op()
		}
		return i + 1, s.op()
	case '+', '-', '*', '/', '%', '?', '&', '|':
		return i + 1, s.op()
	default:
		if isWordByte(c) {
			j := i + 1
			for j < len(s.src) && (isWordByte(s.src[j]) || s.src[j] == '-') {
				j++
			}
			s.term = true
			return j, true
		}
	}
	return i + 1, true
}

// template reads template text (a quoted string or a heredoc) at i.
func (s *hclScanner) template(i int) (int, bool) {
	f := s.top()
	if f.kind == hclHeredoc && f.lineStart {
		f.lineStart = false
		end := s.lineEnd(i)
		if bytes.Equal(bytes.TrimSpace(s.src[i:end]), f.marker) {
			s.pop()
			s.term = true
			return end, true // the newline belongs to the enclosing body
		}
	}
	switch c := s.src[i]; c {
	case '\\':
		if f.kind == hclQuote {
			return i + 2, true
		}
	case '"':
		if f.kind == hclQuote {
			s.pop()
			s.term = true
		}
	case '\n':
		if f.kind == hclHeredoc {
			f.lineStart = true
		}
	case '$', '%':
		switch {
		case s.at(i+1) == c && s.at(i+2) == '{': // $${ and %%{ are literal
			return i + 3, true
		case s.at(i+1) == '{':
			return i + 2, (c == '$' || s.directive(i+2)) && s.push(hclFrame{kind: hclInterp})
		}
	}
	return i + 1, true
}

// directive accounts for the template directive whose keyword follows
// offset i: if and for open a nested template, endif and endfor close it.
func (s *hclScanner) directive(i int) bool {
	for i < len(s.src) && (s.src[i] == '~' || s.src[i] == ' ' || s.src[i] == '\t') {
		i++
	}
	j := i
	for j < len(s.src) && isWordByte(s.src[j]) {
		j++
	}
	switch string(s.src[i:j]) {
	case "if", "for":
		return s.op()
	case "endif", "endfor":
		if f := s.top(); f.ops > 0 {
			f.ops--
			s.ops--
		}
	}
	return true
}

// heredocIntro recognises <<MARKER or <<-MARKER followed by a newline at
// i; it returns the marker and where the heredoc's first line starts.
func (s *hclScanner) heredocIntro(i int) ([]byte, int) {
	if s.at(i+1) != '<' {
		return nil, 0
	}
	j := i + 2
	if s.at(j) == '-' {
		j++
	}
	start := j
	if c := s.at(j); !isWordByte(c) || (c >= '0' && c <= '9') {
		return nil, 0
	}
	for j < len(s.src) && (isWordByte(s.src[j]) || s.src[j] == '-') {
		j++
	}
	marker := s.src[start:j]
	if s.at(j) == '\r' {
		j++
	}
	if s.at(j) != '\n' {
		return nil, 0
	}
	return marker, j + 1
}

// lineEnd returns the offset of the newline ending the line at i, or the
// end of the input.
func (s *hclScanner) lineEnd(i int) int {
	if n := bytes.IndexByte(s.src[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(s.src)
}

// isWordByte reports whether c can be part of an identifier or a number
// (bytes of multi-byte UTF-8 characters included).
func isWordByte(c byte) bool {
	return c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
