package jobspec

import (
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
)

// Error is one problem found in a job file. Line and Column are 1-based;
// they are 0 when the problem has no position in the file.
type Error struct {
	Filename string
	Line     int
	Column   int
	Summary  string
	Detail   string
}

// Error formats the problem as "file:line:col: summary: detail".
func (e *Error) Error() string {
	msg := e.Summary
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.Filename, e.Line, e.Column, msg)
	case e.Filename != "":
		return fmt.Sprintf("%s: %s", e.Filename, msg)
	default:
		return msg
	}
}

// diagsError turns the error diagnostics of a parse into one error (nil when
// there are none). Each diagnostic becomes an *Error; several are joined
// with errors.Join, in source order.
func diagsError(filename string, diags hcl.Diagnostics) error {
	var errs []error
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		e := &Error{Filename: filename, Summary: d.Summary, Detail: d.Detail}
		if d.Subject != nil {
			e.Filename = d.Subject.Filename
			e.Line = d.Subject.Start.Line
			e.Column = d.Subject.Start.Column
		}
		errs = append(errs, e)
	}
	// Report in source order: decoding finds problems block by block.
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i].(*Error), errs[j].(*Error)
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	default:
		return errors.Join(errs...)
	}
}

// errorAt builds an error diagnostic for the range r.
func errorAt(r hcl.Range, summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: r.Ptr()}
}

// lineCol1 is "line N, column M" of the start of r, for messages that point
// at a second place in the file.
func lineCol1(r hcl.Range) string {
	return fmt.Sprintf("line %d, column %d", r.Start.Line, r.Start.Column)
}
