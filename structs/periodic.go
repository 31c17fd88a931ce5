package structs

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/cronexpr"
)

// JobTypeSysBatch is a batch job placed once on every eligible node
// (Nomad's sysbatch): the system scheduler's node filtering with batch
// semantics (an allocation that completes is not replaced).
const JobTypeSysBatch = "sysbatch"

// PeriodicSpecCron is the only periodic spec type: cron expressions.
const PeriodicSpecCron = "cron"

// Child job ID infixes, as Nomad names them: a periodic launch is
// "<parent>/periodic-<unix seconds>", a dispatch
// "<parent>/dispatch-<unix seconds>-<8 hex>".
const (
	PeriodicLaunchSuffix = "/periodic-"
	DispatchLaunchSuffix = "/dispatch-"
)

// DispatchPayloadSizeLimit is the largest dispatch payload (16 KiB, as
// Nomad's).
const DispatchPayloadSizeLimit = 16 * 1024

// Payload requirements of a parameterized job.
const (
	DispatchPayloadOptional  = "optional"
	DispatchPayloadRequired  = "required"
	DispatchPayloadForbidden = "forbidden"
)

// PeriodicConfig is a job's periodic block: the job is a template from
// which the leader launches a child job at every time its cron
// expressions match.
type PeriodicConfig struct {
	Enabled bool
	// Spec is the single cron expression (`cron`); Specs the list
	// (`crons`). One of them is set.
	Spec     string
	Specs    []string
	SpecType string
	// ProhibitOverlap skips a launch while a previous child still runs.
	ProhibitOverlap bool
	// TimeZone is the IANA zone the expressions are read in ("UTC"
	// when empty).
	TimeZone string
}

// Copy returns a copy of p.
func (p *PeriodicConfig) Copy() *PeriodicConfig {
	if p == nil {
		return nil
	}
	c := *p
	c.Specs = slices.Clone(p.Specs)
	return &c
}

// Canonicalize fills in the spec type and the time zone.
func (p *PeriodicConfig) Canonicalize() {
	if p.SpecType == "" {
		p.SpecType = PeriodicSpecCron
	}
	if p.TimeZone == "" {
		p.TimeZone = "UTC"
	}
}

// specs returns every cron expression of p.
func (p *PeriodicConfig) specs() []string {
	if p.Spec != "" {
		return append([]string{p.Spec}, p.Specs...)
	}
	return p.Specs
}

// Validate checks the block: a cron expression (cron or crons, not both)
// that parses and a time zone that exists. A disabled block is not
// checked, as in Nomad.
func (p *PeriodicConfig) Validate() error {
	if p == nil || !p.Enabled {
		return nil
	}
	var errs []string
	if p.SpecType != "" && p.SpecType != PeriodicSpecCron {
		errs = append(errs, fmt.Sprintf("periodic spec type %q is unknown: use %q", p.SpecType, PeriodicSpecCron))
	}
	switch {
	case p.Spec != "" && len(p.Specs) > 0:
		errs = append(errs, "periodic: set either cron or crons, not both")
	case p.Spec == "" && len(p.Specs) == 0:
		errs = append(errs, "periodic: a cron expression is required: set cron or crons")
	}
	for _, s := range p.specs() {
		if _, err := cronexpr.Parse(s); err != nil {
			errs = append(errs, fmt.Sprintf("periodic: cron expression %q does not parse: %v", s, err))
		}
	}
	if _, err := p.Location(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Location is the time zone the expressions are read in.
func (p *PeriodicConfig) Location() (*time.Location, error) {
	if p.TimeZone == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("periodic: time zone %q is unknown: use an IANA name such as \"Europe/Berlin\" or \"UTC\"", p.TimeZone)
	}
	return loc, nil
}

// Next returns the first launch time strictly after from, the earliest
// over every expression; the zero time when none will match again (or a
// spec does not parse, which Validate refuses).
func (p *PeriodicConfig) Next(from time.Time) time.Time {
	loc, err := p.Location()
	if err != nil {
		return time.Time{}
	}
	from = from.In(loc)
	var next time.Time
	for _, s := range p.specs() {
		e, err := cronexpr.Parse(s)
		if err != nil {
			continue
		}
		t := e.Next(from)
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// PeriodicLaunch records a periodic job's last launch (or, before the
// first, the time it was registered), so that a launch happens at most
// once per tick across leader changes.
type PeriodicLaunch struct {
	Namespace   string
	ID          string // the periodic job's ID
	Launch      time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ParameterizedJobConfig is a job's parameterized block: the job is a
// template that `job dispatch` instantiates with a payload and metadata.
type ParameterizedJobConfig struct {
	Payload      string
	MetaRequired []string
	MetaOptional []string
}

// Copy returns a copy of p.
func (p *ParameterizedJobConfig) Copy() *ParameterizedJobConfig {
	if p == nil {
		return nil
	}
	c := *p
	c.MetaRequired = slices.Clone(p.MetaRequired)
	c.MetaOptional = slices.Clone(p.MetaOptional)
	return &c
}

// Canonicalize makes the payload optional when unset.
func (p *ParameterizedJobConfig) Canonicalize() {
	if p.Payload == "" {
		p.Payload = DispatchPayloadOptional
	}
}

// Validate checks the payload requirement and that no meta key is both
// required and optional.
func (p *ParameterizedJobConfig) Validate() error {
	var errs []string
	switch p.Payload {
	case "", DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden:
	default:
		errs = append(errs, fmt.Sprintf("parameterized: payload %q is invalid: use %q, %q or %q",
			p.Payload, DispatchPayloadOptional, DispatchPayloadRequired, DispatchPayloadForbidden))
	}
	for _, k := range p.MetaRequired {
		if slices.Contains(p.MetaOptional, k) {
			errs = append(errs, fmt.Sprintf("parameterized: meta key %q is both required and optional: list it once", k))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// DispatchPayloadConfig is a task's dispatch_payload block: where the
// dispatched payload is written, relative to the task's local/ directory.
type DispatchPayloadConfig struct {
	File string
}

// Validate refuses a file that escapes the task's local/ directory.
func (d *DispatchPayloadConfig) Validate() error {
	if d.File == "" {
		return fmt.Errorf("dispatch_payload: file is required")
	}
	clean := path.Clean("/" + d.File)
	if path.IsAbs(d.File) || strings.HasPrefix(path.Clean(d.File), "..") || clean == "/" {
		return fmt.Errorf("dispatch_payload: file %q must be a relative path inside the task's local/ directory", d.File)
	}
	return nil
}

// IsPeriodic reports whether the job has a periodic block.
func (j *Job) IsPeriodic() bool { return j.Periodic != nil }

// IsPeriodicActive reports whether the leader launches the job's children
// on its schedule: periodic, enabled, not stopped and not a
// parameterized template (whose dispatched children are periodic instead).
func (j *Job) IsPeriodicActive() bool {
	return j.IsPeriodic() && j.Periodic.Enabled && !j.Stop && !j.IsParameterized()
}

// IsParameterized reports whether the job is a parameterized template
// (a dispatched child is not, though it keeps the block).
func (j *Job) IsParameterized() bool { return j.ParameterizedJob != nil && !j.Dispatched }

// IsTemplate reports whether the job is never scheduled itself: a
// periodic or parameterized parent whose children run instead.
func (j *Job) IsTemplate() bool { return j.IsPeriodic() || j.IsParameterized() }

// validateJobKinds returns the problems of the periodic, parameterized and
// dispatch_payload blocks and of their combination with the job type.
func (j *Job) validateJobKinds() []error {
	var errs []error
	if j.Periodic != nil {
		if j.Periodic.Enabled && j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
			errs = append(errs, fmt.Errorf("periodic: a %s job cannot be periodic: use type \"batch\" or \"sysbatch\"", j.Type))
		}
		if err := j.Periodic.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if j.ParameterizedJob != nil {
		if j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
			errs = append(errs, fmt.Errorf("parameterized: a %s job cannot be parameterized: use type \"batch\" or \"sysbatch\"", j.Type))
		}
		if err := j.ParameterizedJob.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(j.Payload) > DispatchPayloadSizeLimit {
		errs = append(errs, fmt.Errorf("payload is %d bytes: at most %d", len(j.Payload), DispatchPayloadSizeLimit))
	}
	for _, tg := range j.TaskGroups {
		for _, t := range tg.Tasks {
			if t.DispatchPayload == nil {
				continue
			}
			if err := t.DispatchPayload.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("group %q, task %q: %w", tg.Name, t.Name, err))
			}
			if j.ParameterizedJob != nil && j.ParameterizedJob.Payload == DispatchPayloadForbidden {
				errs = append(errs, fmt.Errorf("group %q, task %q: dispatch_payload is set but the parameterized block forbids a payload", tg.Name, t.Name))
			}
		}
	}
	return errs
}

// periodicDiff and parameterizedDiff are the "Periodic" and
// "ParameterizedJob" objects of a job diff (`job plan`).
func periodicDiff(old, new *Job) *ObjectDiff {
	flat := func(j *Job) map[string]string {
		if j == nil || j.Periodic == nil {
			return nil
		}
		m := flatStruct(j.Periodic)
		for i, s := range j.Periodic.Specs {
			m["Specs["+fmt.Sprint(i)+"]"] = s
		}
		return m
	}
	return objectDiff("Periodic", flat(old), flat(new))
}

func parameterizedDiff(old, new *Job) *ObjectDiff {
	flat := func(j *Job) map[string]string {
		if j == nil || j.ParameterizedJob == nil {
			return nil
		}
		p := j.ParameterizedJob
		m := map[string]string{"Payload": p.Payload}
		for _, k := range p.MetaRequired {
			m["MetaRequired["+k+"]"] = k
		}
		for _, k := range p.MetaOptional {
			m["MetaOptional["+k+"]"] = k
		}
		return m
	}
	return objectDiff("ParameterizedJob", flat(old), flat(new))
}
