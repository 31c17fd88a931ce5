package structs

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Template change modes (the template block's change_mode), as Nomad's.
const (
	// TemplateChangeModeRestart restarts the task after a re-render.
	TemplateChangeModeRestart = "restart"
	// TemplateChangeModeSignal sends ChangeSignal to the task.
	TemplateChangeModeSignal = "signal"
	// TemplateChangeModeNoop only writes the file.
	TemplateChangeModeNoop = "noop"
	// TemplateChangeModeScript runs ChangeScript inside the task.
	TemplateChangeModeScript = "script"
)

// Template defaults, as Nomad's.
const (
	DefaultTemplatePerms         = "0644"
	DefaultTemplateSplay         = 5 * time.Second
	DefaultChangeScriptTimeout   = 5 * time.Second
	DefaultTemplateLeftDelimiter = "{{"
	// DefaultTemplateRightDelimiter closes an action.
	DefaultTemplateRightDelimiter = "}}"
)

// Template is a file the client renders into the task's directory before
// the task starts, and again when the variables or services it reads
// change (the template block). The language is consul-template's.
type Template struct {
	// SourcePath is a template file, relative to the task's directory;
	// EmbeddedTmpl is the template itself. One of them is set.
	SourcePath   string
	EmbeddedTmpl string
	// DestPath is the rendered file, relative to the task's directory,
	// which it may not leave.
	DestPath string
	// ChangeMode is a TemplateChangeMode*; ChangeSignal goes with
	// "signal" and ChangeScript with "script".
	ChangeMode   string
	ChangeSignal string
	ChangeScript *ChangeScript
	// Splay is the most a change's action is delayed, at random.
	Splay time.Duration
	// Perms are the file's permissions, in octal.
	Perms string
	// Uid and Gid own the file when set (nil: the agent's user).
	Uid *int
	Gid *int
	// LeftDelim and RightDelim open and close an action.
	LeftDelim  string
	RightDelim string
	// Envvars puts the rendered KEY=VALUE lines in the task's environment.
	Envvars bool
	// Wait holds a change back for more changes: at least Min after the
	// last one, at most Max after the first. Nil: none.
	Wait *WaitConfig
	// ErrMissingKey fails the render on a missing map key.
	ErrMissingKey bool
	// Once renders only before the task first starts.
	Once bool
}

// ChangeScript is run inside the task after a re-render (change_mode
// "script").
type ChangeScript struct {
	Command string
	Args    []string
	// Timeout bounds the script.
	Timeout time.Duration
	// FailOnError kills the task when the script fails.
	FailOnError bool
}

// WaitConfig is a template's wait block; a nil bound is unset.
type WaitConfig struct {
	Min *time.Duration
	Max *time.Duration
}

// Copy returns a deep copy of t; nil for nil.
func (t *Template) Copy() *Template {
	if t == nil {
		return nil
	}
	c := *t
	if t.ChangeScript != nil {
		s := *t.ChangeScript
		s.Args = slices.Clone(t.ChangeScript.Args)
		c.ChangeScript = &s
	}
	c.Uid, c.Gid = copyIntPtr(t.Uid), copyIntPtr(t.Gid)
	if t.Wait != nil {
		w := WaitConfig{}
		if t.Wait.Min != nil {
			m := *t.Wait.Min
			w.Min = &m
		}
		if t.Wait.Max != nil {
			m := *t.Wait.Max
			w.Max = &m
		}
		c.Wait = &w
	}
	return &c
}

func copyIntPtr(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyTemplates(ts []*Template) []*Template {
	if ts == nil {
		return nil
	}
	out := make([]*Template, len(ts))
	for i, t := range ts {
		out[i] = t.Copy()
	}
	return out
}

// Canonicalize fills in Nomad's defaults.
func (t *Template) Canonicalize() {
	if t.ChangeMode == "" {
		t.ChangeMode = TemplateChangeModeRestart
	}
	if t.Perms == "" {
		t.Perms = DefaultTemplatePerms
	}
	if t.LeftDelim == "" {
		t.LeftDelim = DefaultTemplateLeftDelimiter
	}
	if t.RightDelim == "" {
		t.RightDelim = DefaultTemplateRightDelimiter
	}
	if t.ChangeScript != nil && t.ChangeScript.Timeout == 0 {
		t.ChangeScript.Timeout = DefaultChangeScriptTimeout
	}
}

// Validate checks what can be checked without the template language (the
// HTTP API's conversion parses the template itself, see templatecheck):
// a template and a destination inside the task's directory, a known
// change mode with what it needs, octal permissions, bounds in order.
func (t *Template) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	switch {
	case t.SourcePath == "" && t.EmbeddedTmpl == "":
		add("no template: give data or a source file")
	case t.SourcePath != "" && t.EmbeddedTmpl != "":
		add("both data and source are set: give one of them")
	}
	if strings.TrimSpace(t.DestPath) == "" {
		add("destination is missing: give a path inside the task's directory, such as local/app.conf")
	} else if _, err := TemplateDestination(t.DestPath); err != nil {
		add("%v", err)
	}
	switch t.ChangeMode {
	case "", TemplateChangeModeRestart, TemplateChangeModeNoop:
	case TemplateChangeModeSignal:
		if t.ChangeSignal == "" {
			add("change_mode %q needs a change_signal, such as \"SIGHUP\"", t.ChangeMode)
		}
	case TemplateChangeModeScript:
		if t.ChangeScript == nil || strings.TrimSpace(t.ChangeScript.Command) == "" {
			add("change_mode %q needs a change_script block with a command", t.ChangeMode)
		}
	default:
		add("change_mode %q is invalid: use %q, %q, %q or %q", t.ChangeMode,
			TemplateChangeModeRestart, TemplateChangeModeSignal, TemplateChangeModeNoop, TemplateChangeModeScript)
	}
	if t.ChangeScript != nil && t.ChangeScript.Timeout < 0 {
		add("change_script timeout must not be negative")
	}
	if t.Splay < 0 {
		add("splay must not be negative")
	}
	if t.Perms != "" {
		if _, err := TemplatePerms(t.Perms); err != nil {
			add("%v", err)
		}
	}
	if w := t.Wait; w != nil {
		if w.Min != nil && *w.Min < 0 || w.Max != nil && *w.Max < 0 {
			add("wait bounds must not be negative")
		}
		if w.Min != nil && w.Max != nil && *w.Max < *w.Min {
			add("wait max (%v) is below wait min (%v)", *w.Max, *w.Min)
		}
	}
	if (t.LeftDelim == "") != (t.RightDelim == "") {
		add("left_delimiter and right_delimiter go together: give both")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// TemplatePerms parses octal permissions ("0644", "644").
func TemplatePerms(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 8, 12)
	if err != nil {
		return 0, fmt.Errorf("perms %q is invalid: give octal permissions, such as \"0644\"", s)
	}
	return uint32(v), nil
}

// TemplateDestination returns dest cleaned, relative to the task's
// directory (a leading "/" is the task's directory, as in Nomad), or an
// error when it leaves the directory or names the directory itself.
func TemplateDestination(dest string) (string, error) {
	if strings.ContainsRune(dest, 0) {
		return "", fmt.Errorf("destination %q contains a null character", dest)
	}
	clean := path.Clean(strings.TrimLeft(dest, "/"))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("destination %q leaves the task's directory: templates render inside it (local/, secrets/ or a directory of your own)", dest)
	}
	if clean == "." {
		return "", fmt.Errorf("destination %q is the task's directory itself: name a file inside it, such as local/app.conf", dest)
	}
	return clean, nil
}

// templatesDiff returns the changes of the tasks' templates, compared in
// order.
func templatesDiff(old, new *Task) []*ObjectDiff {
	var o, n []*Template
	if old != nil {
		o = old.Templates
	}
	if new != nil {
		n = new.Templates
	}
	var out []*ObjectDiff
	for i := range max(len(o), len(n)) {
		var a, b *Template
		if i < len(o) {
			a = o[i]
		}
		if i < len(n) {
			b = n[i]
		}
		if d := objectDiff("Template", flatTemplate(a), flatTemplate(b)); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func flatTemplate(t *Template) map[string]string {
	if t == nil {
		return nil
	}
	m := map[string]string{
		"SourcePath":    t.SourcePath,
		"EmbeddedTmpl":  t.EmbeddedTmpl,
		"DestPath":      t.DestPath,
		"ChangeMode":    t.ChangeMode,
		"ChangeSignal":  t.ChangeSignal,
		"Splay":         t.Splay.String(),
		"Perms":         t.Perms,
		"LeftDelim":     t.LeftDelim,
		"RightDelim":    t.RightDelim,
		"Envvars":       fmt.Sprint(t.Envvars),
		"ErrMissingKey": fmt.Sprint(t.ErrMissingKey),
		"Once":          fmt.Sprint(t.Once),
	}
	if t.Uid != nil {
		m["Uid"] = strconv.Itoa(*t.Uid)
	}
	if t.Gid != nil {
		m["Gid"] = strconv.Itoa(*t.Gid)
	}
	if s := t.ChangeScript; s != nil {
		m["ChangeScript.Command"] = s.Command
		m["ChangeScript.Args"] = strings.Join(s.Args, " ")
		m["ChangeScript.Timeout"] = s.Timeout.String()
		m["ChangeScript.FailOnError"] = fmt.Sprint(s.FailOnError)
	}
	if w := t.Wait; w != nil {
		if w.Min != nil {
			m["Wait.Min"] = w.Min.String()
		}
		if w.Max != nil {
			m["Wait.Max"] = w.Max.String()
		}
	}
	return m
}

// validateTemplates checks a task's templates (where names the task) and
// that no two render to the same file.
func validateTemplates(where string, ts []*Template, add func(string, ...any)) {
	dests := map[string]int{}
	for i, t := range ts {
		if t == nil {
			add("%s, template %d is empty", where, i+1)
			continue
		}
		if err := t.Validate(); err != nil {
			add("%s, template %d: %v", where, i+1, err)
			continue
		}
		d, _ := TemplateDestination(t.DestPath)
		if j, ok := dests[d]; ok {
			add("%s, templates %d and %d both render to %q: give each its own destination", where, j, i+1, t.DestPath)
		}
		dests[d] = i + 1
	}
}
