package jobspec

import (
	"time"

	"github.com/hashicorp/cronexpr"
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-io/drover/api"
)

// periodic decodes a job's `periodic { ... }` block. The cron expressions
// and the time zone are checked here, so that an error points at the
// argument that holds them.
func (d *decoder) periodic(b *hcl.Block) *api.PeriodicConfig {
	c := d.content(b.Body, []string{"cron", "crons", "prohibit_overlap", "time_zone", "enabled"})
	p := &api.PeriodicConfig{
		Spec:            d.str(c.Attributes["cron"]),
		Specs:           d.strList(c.Attributes["crons"]),
		ProhibitOverlap: d.boolean(c.Attributes["prohibit_overlap"]),
		TimeZone:        d.str(c.Attributes["time_zone"]),
		Enabled:         d.boolean(c.Attributes["enabled"]),
	}
	cron, crons := c.Attributes["cron"], c.Attributes["crons"]
	switch {
	case cron != nil && crons != nil:
		d.errorf(crons.Range, "Conflicting periodic arguments", "Set either cron or crons, not both.")
	case cron == nil && crons == nil:
		d.errorf(b.DefRange, "Missing cron expression", "A periodic block needs cron = \"...\" or crons = [...], such as cron = \"*/15 * * * *\".")
	}
	if p.Spec != nil {
		d.checkCron(cron, *p.Spec)
	}
	for _, s := range p.Specs {
		d.checkCron(crons, s)
	}
	if p.TimeZone != nil {
		if _, err := time.LoadLocation(*p.TimeZone); err != nil {
			d.errorf(c.Attributes["time_zone"].Expr.Range(), "Unknown time zone",
				"%q is not a time zone; use an IANA name such as \"Europe/Berlin\" or \"UTC\".", *p.TimeZone)
		}
	}
	return p
}

// checkCron reports a cron expression of attr that does not parse.
func (d *decoder) checkCron(attr *hcl.Attribute, spec string) {
	if _, err := cronexpr.Parse(spec); err != nil {
		d.errorf(attr.Expr.Range(), "Invalid cron expression",
			"%q in %s does not parse (%v); use five fields: minute hour day-of-month month day-of-week, such as \"*/15 * * * *\".", spec, attr.Name, err)
	}
}

var dispatchPayloads = map[string]bool{"optional": true, "required": true, "forbidden": true}

// parameterized decodes a job's `parameterized { ... }` block.
func (d *decoder) parameterized(b *hcl.Block) *api.ParameterizedJobConfig {
	c := d.content(b.Body, []string{"payload", "meta_required", "meta_optional"})
	p := &api.ParameterizedJobConfig{
		Payload:      d.strVal(c.Attributes["payload"]),
		MetaRequired: d.strList(c.Attributes["meta_required"]),
		MetaOptional: d.strList(c.Attributes["meta_optional"]),
	}
	if at := c.Attributes["payload"]; at != nil && p.Payload != "" && !dispatchPayloads[p.Payload] {
		d.errorf(at.Expr.Range(), "Invalid payload", "%q is not a payload requirement; use \"optional\", \"required\" or \"forbidden\".", p.Payload)
	}
	return p
}

// dispatchPayload decodes a task's `dispatch_payload { file = "..." }`.
func (d *decoder) dispatchPayload(b *hcl.Block) *api.DispatchPayloadConfig {
	c := d.content(b.Body, []string{"file"})
	at := c.Attributes["file"]
	if at == nil {
		d.errorf(b.DefRange, "Missing file", "A dispatch_payload block needs file = \"...\", the path in the task's local/ directory the payload is written to.")
		return nil
	}
	return &api.DispatchPayloadConfig{File: d.strVal(at)}
}
