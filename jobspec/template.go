package jobspec

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/templatecheck"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// templates turns the JSON the template blocks decoded to (Nomad's API
// shape, see templateSpec) into typed templates, and parses each inline
// template (templatecheck): a syntax error, an unknown function or a
// Consul or Vault function is reported at its line and column in the job
// file. nil when there are none.
func (d *decoder) templates(raw json.RawMessage, blocks []*hcl.Block) []*api.Template {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var out []*api.Template
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != len(blocks) {
		// Unreachable unless a block had errors, already reported:
		// rawBlocks built raw from templateSpec's typed arguments.
		return out
	}
	for i, t := range out {
		if t == nil || t.EmbeddedTmpl == nil {
			continue
		}
		left, right := "", ""
		if t.LeftDelim != nil {
			left = *t.LeftDelim
		}
		if t.RightDelim != nil {
			right = *t.RightDelim
		}
		problems := templatecheck.Check(*t.EmbeddedTmpl, left, right)
		if len(problems) == 0 {
			continue
		}
		expr := dataExpr(blocks[i])
		for _, p := range problems {
			r := blocks[i].DefRange
			if expr != nil {
				r = templateRange(expr, p)
			}
			d.errorf(r, "Invalid template", "%s", strings.TrimSpace(p.Msg)+
				fmt.Sprintf(" (line %d, column %d of the template)", p.Line, p.Col))
		}
	}
	return out
}

// dataExpr returns the expression of the block's data argument; nil when
// the block is not native syntax or has none.
func dataExpr(b *hcl.Block) hclsyntax.Expression {
	body, ok := b.Body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	at := body.Attributes["data"]
	if at == nil {
		return nil
	}
	return at.Expr
}

// templateRange maps a place in a template to the job file: a heredoc's
// text starts on the line after its opening marker; a quoted string's
// right after its quote. Escapes and a stripped heredoc indent shift the
// column a little; the line is exact.
func templateRange(expr hclsyntax.Expression, p templatecheck.Problem) hcl.Range {
	r := expr.Range()
	start := r.Start
	if tw, ok := expr.(*hclsyntax.TemplateExpr); ok && len(tw.Parts) > 0 {
		start = tw.Parts[0].Range().Start
	}
	pos := hcl.Pos{Line: start.Line + p.Line - 1, Column: p.Col}
	if p.Line == 1 {
		pos.Column = start.Column + p.Col - 1
	}
	return hcl.Range{Filename: r.Filename, Start: pos, End: pos}
}
