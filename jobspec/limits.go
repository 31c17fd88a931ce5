package jobspec

import (
	"errors"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-io/drover/inputlimit"
)

// checkSource refuses a job file, variable file or -var value that is too
// large or nested too deep to parse safely (see package inputlimit), before
// any recursive parser sees it: HCL's parser recurses once per level, and a
// file nested 100,000 levels deep would exhaust the stack.
func checkSource(filename string, src []byte, isJSON bool) error {
	f := inputlimit.HCL
	if isJSON {
		f = inputlimit.JSON
	}
	return limitError(inputlimit.Check(filename, src, f))
}

// limitError turns an *inputlimit.Error into this package's *Error.
func limitError(err error) error {
	var le *inputlimit.Error
	if !errors.As(err, &le) {
		return err
	}
	summary := le.Summary
	if le.Path != "" {
		summary += " at " + le.Path
	}
	return &Error{Filename: le.Filename, Line: le.Line, Column: le.Column, Summary: summary, Detail: le.Detail}
}

// limitDiag reports input refused by checkSource as a diagnostic, at the
// position the error gives (none for a size).
func limitDiag(err error) *hcl.Diagnostic {
	var le *inputlimit.Error
	if !errors.As(err, &le) {
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: err.Error()}
	}
	pos := hcl.Pos{Line: le.Line, Column: le.Column}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: le.Summary, Detail: le.Detail,
		Subject: &hcl.Range{Filename: le.Filename, Start: pos, End: pos}}
}
