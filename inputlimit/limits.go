package inputlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Limits on untrusted input. Real job files and configurations stay far
// below them: the deepest job files seen nest about a dozen levels
// (job > group > task > config > mount > volume_options > ...), and the
// largest hand-written ones are tens of kilobytes.
const (
	// MaxNesting is the deepest nesting accepted in an HCL or JSON
	// document: blocks, objects, lists, parentheses, strings and
	// interpolations, plus, in HCL, the operators chained in one
	// expression (each of which is a level of the parsed expression).
	MaxNesting = 100

	// MaxHCLBytes is the largest HCL document accepted: a job file, a
	// variable file or an agent configuration file. Parsing HCL costs
	// several hundred bytes of memory per byte of dense input. 1 MiB is
	// also Nomad's default limit on a job's stored source.
	MaxHCLBytes = 1 << 20

	// MaxJSONBytes is the largest JSON document accepted: a JSON job
	// file, an agent configuration in JSON, an HTTP request body.
	MaxJSONBytes = 10 << 20
)

// Error is input refused because it exceeds a limit. It formats as
// "file:line:col: summary: detail" (without the parts that are unset).
type Error struct {
	// Filename names the input ("job.nomad.hcl", "request body").
	Filename string
	// Line and Column (1-based) are where the limit was crossed; 0 when
	// the input as a whole is at fault (its size).
	Line, Column int
	// Path is, for JSON, where in the document the limit was crossed,
	// such as Job.TaskGroups[0].Tasks[0].Config.a.b; "" otherwise.
	Path string
	// Summary says which limit ("Nesting too deep", "Input too large").
	Summary string
	// Detail says what the limit is and what to do.
	Detail string
}

// Error formats the problem.
func (e *Error) Error() string {
	msg := e.Summary
	if e.Path != "" {
		msg += " at " + e.Path
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	switch {
	case e.Line > 0 && e.Filename != "":
		return fmt.Sprintf("%s:%d:%d: %s", e.Filename, e.Line, e.Column, msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, msg)
	case e.Filename != "":
		return e.Filename + ": " + msg
	default:
		return msg
	}
}

// CheckSize refuses input larger than max bytes.
func CheckSize(filename string, size int64, max int64) error {
	if size <= max {
		return nil
	}
	return tooLarge(filename, size, max)
}

// tooLarge is the error of an input of size bytes (-1: unknown, more
// than max) over max.
func tooLarge(filename string, size, max int64) *Error {
	detail := fmt.Sprintf("it is %d bytes, and the limit is %d bytes (%s)", size, max, human(max))
	if size < 0 {
		detail = fmt.Sprintf("it is larger than the limit of %d bytes (%s)", max, human(max))
	}
	return &Error{Filename: filename, Summary: "Input too large", Detail: detail + "; split it or make it smaller"}
}

// human renders a byte count as "1 MiB" when it is a whole number of them.
func human(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file at path if it holds at most max bytes. A larger
// file is an *Error, found without reading more than max+1 bytes of it
// (a device or a pipe that never ends is refused the same way).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		size := int64(-1)
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
		return nil, tooLarge(path, size, max)
	}
	return b, nil
}

// IsLimit reports whether err is, or wraps, an *Error of this package.
func IsLimit(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// lineCol is the 1-based line and column of byte offset off in src.
func lineCol(src []byte, off int) (line, col int) {
	line, col = 1, 1
	for _, c := range src[:min(off, len(src))] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// Format is the syntax of a document.
type Format int

// The formats Check knows.
const (
	// HCL is HCL's native syntax.
	HCL Format = iota
	// JSON is JSON (also HCL's JSON syntax).
	JSON
)

// Check refuses a document larger than its format's limit (MaxHCLBytes,
// MaxJSONBytes) or nested deeper than MaxNesting: what every door checks
// before it hands a whole document to a parser.
func Check(filename string, src []byte, f Format) error {
	if f == JSON {
		if err := CheckSize(filename, int64(len(src)), MaxJSONBytes); err != nil {
			return err
		}
		return CheckJSON(filename, src, MaxNesting)
	}
	if err := CheckSize(filename, int64(len(src)), MaxHCLBytes); err != nil {
		return err
	}
	return CheckHCL(filename, src, MaxNesting)
}
