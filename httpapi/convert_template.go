package httpapi

import (
	"slices"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/templatecheck"
)

// templates converts a task's template blocks and parses each inline
// template (templatecheck): a syntax error, an unknown function or a
// Consul or Vault function is refused here, with its line and column in
// the template. The rest is checked with the job (structs.Template.Validate).
func (c *converter) templates(where string, in []*api.Template) []*structs.Template {
	if len(in) == 0 {
		return nil
	}
	out := make([]*structs.Template, 0, len(in))
	for i, t := range in {
		if t == nil {
			c.errorf("%s: template %d is empty: give it data and a destination", where, i+1)
			continue
		}
		o := &structs.Template{
			SourcePath:    deref(t.SourcePath),
			EmbeddedTmpl:  deref(t.EmbeddedTmpl),
			DestPath:      deref(t.DestPath),
			ChangeMode:    deref(t.ChangeMode),
			ChangeSignal:  deref(t.ChangeSignal),
			Splay:         deref(t.Splay),
			Perms:         deref(t.Perms),
			Uid:           t.Uid,
			Gid:           t.Gid,
			LeftDelim:     deref(t.LeftDelim),
			RightDelim:    deref(t.RightDelim),
			Envvars:       deref(t.Envvars),
			ErrMissingKey: deref(t.ErrMissingKey),
			Once:          deref(t.Once),
		}
		if t.Splay == nil {
			o.Splay = structs.DefaultTemplateSplay
		}
		if s := t.ChangeScript; s != nil {
			o.ChangeScript = &structs.ChangeScript{
				Command:     deref(s.Command),
				Args:        slices.Clone(s.Args),
				Timeout:     deref(s.Timeout),
				FailOnError: deref(s.FailOnError),
			}
		}
		if w := t.Wait; w != nil && (w.Min != nil || w.Max != nil) {
			o.Wait = &structs.WaitConfig{Min: w.Min, Max: w.Max}
		}
		if o.EmbeddedTmpl != "" {
			for _, p := range templatecheck.Check(o.EmbeddedTmpl, o.LeftDelim, o.RightDelim) {
				c.errorf("%s, template %d (%s): %d:%d: %s", where, i+1, o.DestPath, p.Line, p.Col, p.Msg)
			}
		}
		out = append(out, o)
	}
	return out
}
