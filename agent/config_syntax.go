package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	hcl1 "github.com/hashicorp/hcl"
	hcl1ast "github.com/hashicorp/hcl/hcl/ast"
	hcl1parser "github.com/hashicorp/hcl/hcl/parser"
	hcl1scanner "github.com/hashicorp/hcl/hcl/scanner"
	hcl1token "github.com/hashicorp/hcl/hcl/token"
)

// The agent configuration is read in two steps: the file's syntax (HCL as
// Nomad writes it, or JSON) becomes a neutral tree of cfgValues, then the
// decoder (config_decode.go) walks that tree against the schema. The tree
// keeps each key's position for file:line:col messages, and whether a key
// was written as a block (`meta { ... }`) or an argument (`meta = { ... }`),
// which only free-form plugin config cares about.

// cfgPos is a 1-based line and column in a config file; zero when unknown.
type cfgPos struct{ line, col int }

// valueKind is the syntactic kind of a cfgValue.
type valueKind int

const (
	kindString valueKind = iota
	kindNumber
	kindBool
	kindNull
	kindList
	kindObject
)

func (k valueKind) String() string {
	switch k {
	case kindString:
		return "a string"
	case kindNumber:
		return "a number"
	case kindBool:
		return "a bool"
	case kindNull:
		return "null"
	case kindList:
		return "a list"
	}
	return "a block or object"
}

// cfgValue is one value of a config file.
type cfgValue struct {
	pos  cfgPos
	kind valueKind
	// text is a string's value, a number's literal text, or "true"/"false".
	text  string
	list  []*cfgValue // kindList
	items []*cfgItem  // kindObject, in file order (keys may repeat)
}

// cfgItem is one key of an object or block body: `key "label" { ... }`,
// `key = value` or, in JSON, `"key": value`.
type cfgItem struct {
	key    string
	labels []string
	pos    cfgPos
	// block is true for HCL block syntax (no "=").
	block bool
	val   *cfgValue
}

// configFormat names the syntax of a config file.
type configFormat string

const (
	formatHCL  configFormat = "HCL"
	formatJSON configFormat = "JSON"
)

// detectFormat decides by content, as Nomad does: a file whose first
// significant character is "{" is JSON, anything else HCL. The file name
// plays no part, so a JSON file named "agent.conf" (or a temporary file
// without an extension) is read as JSON.
func detectFormat(src []byte) configFormat {
	s := bytes.TrimLeft(bytes.TrimPrefix(src, utf8BOM), " \t\r\n")
	if len(s) > 0 && s[0] == '{' {
		return formatJSON
	}
	return formatHCL
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// syntaxError is a malformed file, at a position when one is known.
type syntaxError struct {
	pos cfgPos
	msg string
}

func (e *syntaxError) Error() string {
	if e.pos.line == 0 {
		return e.msg
	}
	return fmt.Sprintf("%d:%d: %s", e.pos.line, e.pos.col, e.msg)
}

// parseSyntax turns src into the tree of its top-level object.
func parseSyntax(src []byte) (*cfgValue, configFormat, error) {
	src = bytes.TrimPrefix(src, utf8BOM)
	switch format := detectFormat(src); format {
	case formatJSON:
		v, err := parseJSONTree(src)
		return v, format, err
	default:
		v, err := parseHCLTree(src)
		return v, format, err
	}
}

// parseHCLTree parses HCL with the HCL 1 parser, the one Nomad reads agent
// files with: quoted keys (`"driver.allowlist" = "docker"`), blocks written
// as maps (`meta = { ... }`) and repeated blocks are all valid.
func parseHCLTree(src []byte) (*cfgValue, error) {
	f, err := hcl1.ParseBytes(src)
	if err != nil {
		var pe *hcl1parser.PosError
		if errors.As(err, &pe) {
			return nil, &syntaxError{pos: cfgPos{pe.Pos.Line, pe.Pos.Column}, msg: pe.Err.Error()}
		}
		return nil, &syntaxError{msg: err.Error()}
	}
	list, ok := f.Node.(*hcl1ast.ObjectList)
	if !ok {
		return nil, &syntaxError{msg: "the file is not a set of keys and blocks"}
	}
	if pos, dangling := danglingAssign(src); dangling {
		// The HCL 1 parser drops a last `key =` without a value.
		return nil, &syntaxError{pos: pos, msg: "expected a value after ="}
	}
	return hclObject(list, cfgPos{1, 1})
}

// danglingAssign reports whether the last token of src (comments aside) is
// "=", and where.
func danglingAssign(src []byte) (cfgPos, bool) {
	sc := hcl1scanner.New(src)
	var last hcl1token.Token
	for tok := sc.Scan(); tok.Type != hcl1token.EOF; tok = sc.Scan() {
		if tok.Type != hcl1token.COMMENT {
			last = tok
		}
	}
	return hclPos(last.Pos), last.Type == hcl1token.ASSIGN
}

func hclPos(p hcl1token.Pos) cfgPos { return cfgPos{p.Line, p.Column} }

func hclObject(list *hcl1ast.ObjectList, pos cfgPos) (*cfgValue, error) {
	obj := &cfgValue{pos: pos, kind: kindObject}
	for _, it := range list.Items {
		if len(it.Keys) == 0 {
			continue
		}
		item := &cfgItem{pos: hclPos(it.Keys[0].Pos()), block: !it.Assign.IsValid()}
		for i, k := range it.Keys {
			name, err := hclKey(k)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				item.key = name
			} else {
				item.labels = append(item.labels, name)
			}
		}
		v, err := hclValue(it.Val)
		if err != nil {
			return nil, err
		}
		item.val = v
		obj.items = append(obj.items, item)
	}
	return obj, nil
}

// hclKey returns a key's name, unquoted.
func hclKey(k *hcl1ast.ObjectKey) (string, error) {
	tok := k.Token
	if tok.Type != hcl1token.STRING {
		return tok.Text, nil
	}
	s, err := unquoteHCL(tok)
	if err != nil {
		return "", &syntaxError{pos: hclPos(tok.Pos), msg: fmt.Sprintf("invalid quoted key %s: %v", tok.Text, err)}
	}
	return s, nil
}

// unquoteHCL decodes a string or heredoc token; the HCL 1 library panics on
// what its scanner accepted but cannot decode, so that is recovered here.
func unquoteHCL(tok hcl1token.Token) (s string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	v, ok := tok.Value().(string)
	if !ok {
		return "", errors.New("not a string")
	}
	return v, nil
}

func hclValue(n hcl1ast.Node) (*cfgValue, error) {
	switch n := n.(type) {
	case *hcl1ast.LiteralType:
		pos := hclPos(n.Token.Pos)
		switch n.Token.Type {
		case hcl1token.STRING, hcl1token.HEREDOC:
			s, err := unquoteHCL(n.Token)
			if err != nil {
				return nil, &syntaxError{pos: pos, msg: fmt.Sprintf("invalid string %s: %v", n.Token.Text, err)}
			}
			return &cfgValue{pos: pos, kind: kindString, text: s}, nil
		case hcl1token.NUMBER, hcl1token.FLOAT:
			return &cfgValue{pos: pos, kind: kindNumber, text: n.Token.Text}, nil
		case hcl1token.BOOL:
			return &cfgValue{pos: pos, kind: kindBool, text: n.Token.Text}, nil
		}
		return nil, &syntaxError{pos: pos, msg: fmt.Sprintf("unexpected %s", n.Token.Text)}
	case *hcl1ast.ListType:
		out := &cfgValue{pos: hclPos(n.Lbrack), kind: kindList}
		for _, e := range n.List {
			v, err := hclValue(e)
			if err != nil {
				return nil, err
			}
			out.list = append(out.list, v)
		}
		return out, nil
	case *hcl1ast.ObjectType:
		return hclObject(n.List, hclPos(n.Lbrace))
	}
	return nil, &syntaxError{pos: hclPos(n.Pos()), msg: fmt.Sprintf("unexpected %T", n)}
}

// parseJSONTree parses JSON, keeping positions (HCL 1's JSON reader loses
// them and accepts malformed input).
func parseJSONTree(src []byte) (*cfgValue, error) {
	p := &jsonTree{src: src, dec: json.NewDecoder(bytes.NewReader(src))}
	p.dec.UseNumber()
	v, err := p.value()
	if err != nil {
		return nil, p.wrap(err)
	}
	if v.kind != kindObject {
		return nil, &syntaxError{pos: v.pos, msg: "the configuration must be a JSON object"}
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, &syntaxError{pos: p.posAt(int(p.dec.InputOffset())), msg: "unexpected content after the JSON object"}
	}
	return v, nil
}

// jsonTree is a JSON reader that records where each token starts.
type jsonTree struct {
	src []byte
	dec *json.Decoder
}

// next returns the next token and where it starts.
func (p *jsonTree) next() (json.Token, cfgPos, error) {
	off := int(p.dec.InputOffset())
	for off < len(p.src) && strings.IndexByte(" \t\r\n,:", p.src[off]) >= 0 {
		off++
	}
	tok, err := p.dec.Token()
	return tok, p.posAt(off), err
}

func (p *jsonTree) posAt(off int) cfgPos {
	if off > len(p.src) {
		off = len(p.src)
	}
	before := p.src[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := off - bytes.LastIndexByte(before, '\n')
	return cfgPos{line, col}
}

// wrap turns encoding/json's errors into positioned syntax errors.
func (p *jsonTree) wrap(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return &syntaxError{pos: p.posAt(int(se.Offset)), msg: se.Error()}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &syntaxError{pos: p.posAt(len(p.src)), msg: "unexpected end of JSON input"}
	}
	var synErr *syntaxError
	if errors.As(err, &synErr) {
		return err
	}
	return &syntaxError{pos: p.posAt(int(p.dec.InputOffset())), msg: err.Error()}
}

func (p *jsonTree) value() (*cfgValue, error) {
	tok, pos, err := p.next()
	if err != nil {
		return nil, err
	}
	return p.valueFrom(tok, pos)
}

func (p *jsonTree) valueFrom(tok json.Token, pos cfgPos) (*cfgValue, error) {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := &cfgValue{pos: pos, kind: kindObject}
			for p.dec.More() {
				ktok, kpos, err := p.next()
				if err != nil {
					return nil, err
				}
				key, ok := ktok.(string)
				if !ok {
					return nil, &syntaxError{pos: kpos, msg: "expected an object key"}
				}
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				obj.items = append(obj.items, &cfgItem{key: key, pos: kpos, val: v})
			}
			if _, _, err := p.next(); err != nil { // '}'
				return nil, err
			}
			return obj, nil
		case '[':
			list := &cfgValue{pos: pos, kind: kindList}
			for p.dec.More() {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				list.list = append(list.list, v)
			}
			if _, _, err := p.next(); err != nil { // ']'
				return nil, err
			}
			return list, nil
		}
		return nil, &syntaxError{pos: pos, msg: fmt.Sprintf("unexpected %q", t)}
	case string:
		return &cfgValue{pos: pos, kind: kindString, text: t}, nil
	case json.Number:
		return &cfgValue{pos: pos, kind: kindNumber, text: t.String()}, nil
	case bool:
		return &cfgValue{pos: pos, kind: kindBool, text: strconv.FormatBool(t)}, nil
	case nil:
		return &cfgValue{pos: pos, kind: kindNull}, nil
	}
	return nil, &syntaxError{pos: pos, msg: fmt.Sprintf("unexpected token %v", tok)}
}
