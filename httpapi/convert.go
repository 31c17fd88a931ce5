package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// Defaults applied when a submitted field is unset (a nil pointer), as
// Nomad's API does. Server-side defaults (structs.Job.Canonicalize) fill the
// rest.
const (
	defaultGroupCount  = 1
	defaultLogMaxFiles = 10
	defaultLogMaxSize  = 10
)

// ConvertJob converts a job as submitted over the HTTP API into a domain job.
//
// A nil pointer is "unset" and gets Nomad's default; a set value is kept,
// even when it is zero. Restart policies are resolved: the group's fields
// override the job type's default policy, and each task's fields override
// its group's.
//
// Fields that Nomad defines and drover does not implement are checked: a
// null or zero value (null, [], {}, 0, false, "", or an object of such
// values) is accepted silently; a set harmless one is ignored and reported
// in the returned warnings; a set one whose absence would change what the
// job does is an error. All errors found are returned together, joined, as a
// structs.KindInvalid error.
func ConvertJob(in *api.Job) (*structs.Job, []string, error) {
	if in == nil {
		return nil, nil, structs.Invalid("job is missing: send {\"Job\": {...}}")
	}
	c := &converter{}
	out := c.job(in)
	if len(c.errs) > 0 {
		return nil, c.warnings, &structs.KindError{Kind: structs.KindInvalid, Msg: errors.Join(c.errs...).Error()}
	}
	return out, c.warnings, nil
}

// converter accumulates the warnings and errors of one conversion.
type converter struct {
	warnings []string
	errs     []error
}

func (c *converter) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// support says what drover does with a set field it does not implement.
type support int

const (
	// ignored fields do not change what runs: drover warns and goes on.
	ignored support = iota
	// rejected fields change what the job does: drover refuses the job.
	rejected
)

// unimplemented is a Nomad field drover does not implement.
type unimplemented struct {
	field   string          // JSON field name
	block   string          // its name in a job file
	value   json.RawMessage // as submitted
	support support
}

// checkUnimplemented reports the set fields among fs, where names the
// object that holds them ("job", `group "web"`, ...).
func (c *converter) checkUnimplemented(where string, fs ...unimplemented) {
	for _, f := range fs {
		if isUnsetJSON(f.value) {
			continue
		}
		switch f.support {
		case rejected:
			c.errorf("%s: %s (%s) is not supported by drover yet: remove it from the job", where, f.field, f.block)
		default:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s (%s) is not supported by drover yet and was ignored", where, f.field, f.block))
		}
	}
}

// isUnsetJSON reports whether raw is absent, null, false, 0, "", [] or an
// object whose values are all unset: what Nomad's clients send for a field
// the user did not set.
func isUnsetJSON(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	return isZeroValue(v)
}

func isZeroValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isZeroValue(e) {
				return false
			}
		}
		return true
	}
	return false
}

func (c *converter) job(in *api.Job) *structs.Job {
	out := &structs.Job{
		Region:      deref(in.Region),
		Namespace:   deref(in.Namespace),
		ID:          deref(in.ID),
		Name:        deref(in.Name),
		Type:        deref(in.Type),
		Priority:    deref(in.Priority),
		AllAtOnce:   deref(in.AllAtOnce),
		Datacenters: slices.Clone(in.Datacenters),
		Constraints: c.constraints("job", in.Constraints),
		Affinities:  c.affinities("job", in.Affinities), // convert_placement.go
		Spreads:     c.spreads("job", in.Spreads),
		Meta:        maps.Clone(in.Meta),
	}
	if strings.ContainsFunc(out.ID, func(r rune) bool { return r == ' ' || r == 0 }) {
		c.errorf("job ID %q must not contain spaces or null characters", out.ID)
	}
	if in.Priority != nil && (*in.Priority < structs.JobMinPriority || *in.Priority > structs.JobMaxPriority) {
		c.errorf("job priority %d is out of range [%d, %d]", *in.Priority, structs.JobMinPriority, structs.JobMaxPriority)
	}
	out.NodePool = c.nodePool(in.NodePool)     // convert_placement.go
	out.Periodic = periodicConfig(in.Periodic) // convert_periodic.go
	out.ParameterizedJob = parameterizedConfig(in.ParameterizedJob)
	c.checkUnimplemented("job",
		unimplemented{"Multiregion", "multiregion block", in.Multiregion, rejected},
		unimplemented{"UI", "ui block", in.UI, ignored},
		unimplemented{"ConsulNamespace", "consul namespace", in.ConsulNamespace, ignored},
		unimplemented{"VaultNamespace", "vault namespace", in.VaultNamespace, ignored},
		unimplemented{"VersionTag", "version tag", in.VersionTag, ignored},
	)
	// ParentID, Dispatched, Payload, DispatchIdempotencyToken and
	// NomadTokenID are set by the server when it launches or dispatches a
	// child; like the other server-set fields they are ignored.

	jobType := out.Type
	if jobType == "" {
		jobType = structs.JobTypeService
	}
	for i, tg := range in.TaskGroups {
		if tg == nil {
			c.errorf("group %d is null", i+1)
			continue
		}
		g := c.group(tg, jobType)
		g.ReschedulePolicy = c.reschedulePolicy(fmt.Sprintf("group %q", g.Name), jobType, in.Reschedule, tg.ReschedulePolicy) // convert_reschedule.go
		out.TaskGroups = append(out.TaskGroups, g)
	}
	c.updateStrategies(in, out, jobType) // convert_update.go
	groupMigrate := map[string]json.RawMessage{}
	for _, tg := range in.TaskGroups {
		if tg != nil {
			groupMigrate[deref(tg.Name)] = tg.Migrate
		}
	}
	c.migrateStrategies(in.Migrate, groupMigrate, out, jobType) // convert_migrate.go
	return out
}

func (c *converter) group(in *api.TaskGroup, jobType string) *structs.TaskGroup {
	where := fmt.Sprintf("group %q", deref(in.Name))
	out := &structs.TaskGroup{
		Name:        deref(in.Name),
		Count:       defaultGroupCount,
		Constraints: c.constraints(where, in.Constraints),
		Affinities:  c.affinities(where, in.Affinities),
		Spreads:     c.spreads(where, in.Spreads),
		Meta:        maps.Clone(in.Meta),
	}
	if in.Count != nil {
		out.Count = *in.Count
	}
	out.RestartPolicy = mergeRestart(structs.DefaultRestartPolicy(jobType), in.RestartPolicy)
	out.EphemeralDisk = ephemeralDisk(in.EphemeralDisk)
	out.Networks = c.networks(where, in.Networks)              // convert_network.go
	out.Volumes = c.volumes(where, in.Volumes)                 // convert_volumes.go
	out.Services = c.services(where, in.Services)              // convert_services.go
	out.Scaling = c.groupScaling(where, in.Scaling, out.Count) // convert_scaling.go
	out.Disconnect = c.disconnectStrategy(where, in)           // convert_disconnect.go
	if in.RestartPolicy != nil {
		c.checkUnimplemented(where+" restart", unimplemented{"RenderTemplates", "render_templates", in.RestartPolicy.RenderTemplates, ignored})
	}
	c.checkUnimplemented(where,
		unimplemented{"ShutdownDelay", "shutdown_delay", in.ShutdownDelay, ignored},
		unimplemented{"MaxRunDuration", "max_run_duration", in.MaxRunDuration, rejected},
		unimplemented{"Consul", "consul block", in.Consul, ignored},
		unimplemented{"PreventRescheduleOnLost", "prevent_reschedule_on_lost", in.PreventRescheduleOnLost, ignored},
	)
	for i, t := range in.Tasks {
		if t == nil {
			c.errorf("%s: task %d is null", where, i+1)
			continue
		}
		task := c.task(where, t, out.RestartPolicy)
		task.VolumeMounts = c.volumeMounts(fmt.Sprintf("%s, task %q", where, t.Name), t.VolumeMounts, in.Volumes)
		out.Tasks = append(out.Tasks, task)
	}
	c.warnings = append(c.warnings, portReferenceWarnings(where, out)...) // convert_network.go
	return out
}

func (c *converter) task(group string, in *api.Task, groupRestart *structs.RestartPolicy) *structs.Task {
	where := fmt.Sprintf("%s, task %q", group, in.Name)
	out := &structs.Task{
		Name:          in.Name,
		Driver:        in.Driver,
		User:          in.User,
		Config:        maps.Clone(in.Config),
		Env:           maps.Clone(in.Env),
		Constraints:   c.constraints(where, in.Constraints),
		Affinities:    c.affinities(where, in.Affinities),
		Resources:     c.resources(where, in.Resources),
		RestartPolicy: mergeRestart(groupRestart, in.RestartPolicy),
		Meta:          maps.Clone(in.Meta),
		KillTimeout:   deref(in.KillTimeout),
		KillSignal:    in.KillSignal,
		Leader:        in.Leader,
		LogConfig:     c.logConfig(where, in.LogConfig),
	}
	if lc := in.Lifecycle; lc != nil && (lc.Hook != "" || lc.Sidecar) {
		out.Lifecycle = &structs.TaskLifecycle{Hook: lc.Hook, Sidecar: lc.Sidecar}
	}
	out.Artifacts = c.artifacts(where, in.Artifacts)                               // convert_artifact.go
	out.Services = c.services(where, in.Services)                                  // convert_services.go
	out.Templates = c.templates(where, in.Templates)                               // convert_template.go
	out.Identity, out.Identities = c.identities(where, in.Identity, in.Identities) // convert_identity.go
	out.ScalingPolicies = c.taskScaling(where, in.ScalingPolicies)                 // convert_scaling.go
	if in.DispatchPayload != nil {
		out.DispatchPayload = &structs.DispatchPayloadConfig{File: in.DispatchPayload.File}
	}
	if in.RestartPolicy != nil {
		c.checkUnimplemented(where+" restart", unimplemented{"RenderTemplates", "render_templates", in.RestartPolicy.RenderTemplates, ignored})
	}
	c.checkUnimplemented(where,
		unimplemented{"Vault", "vault block", in.Vault, rejected},
		unimplemented{"Consul", "consul block", in.Consul, ignored},
		unimplemented{"CSIPluginConfig", "csi_plugin block", in.CSIPluginConfig, rejected},
		unimplemented{"ShutdownDelay", "shutdown_delay", in.ShutdownDelay, ignored},
		unimplemented{"Kind", "kind", in.Kind, ignored},
		unimplemented{"Secrets", "secret block", in.Secrets, rejected},
		unimplemented{"Actions", "action block", in.Actions, ignored},
		unimplemented{"Schedule", "schedule block", in.Schedule, rejected},
	)
	return out
}

func (c *converter) resources(where string, in *api.Resources) *structs.Resources {
	out := structs.DefaultResources()
	if in == nil {
		return out
	}
	switch {
	case in.CPU != nil:
		out.CPU = *in.CPU
	case in.Cores != nil:
		// Asking for whole cores and no MHz reserves no shared CPU.
		out.CPU = 0
	}
	out.Cores = deref(in.Cores)
	if in.MemoryMB != nil {
		out.MemoryMB = *in.MemoryMB
	}
	out.MemoryMaxMB = deref(in.MemoryMaxMB)
	out.DiskMB = deref(in.DiskMB)
	if out.Cores < 0 || out.CPU < 0 || out.MemoryMaxMB < 0 || out.DiskMB < 0 {
		c.errorf("%s: resources must not be negative", where)
	}
	if out.MemoryMaxMB != 0 && out.MemoryMaxMB < out.MemoryMB {
		c.errorf("%s: memory_max %d MB is below memory %d MB", where, out.MemoryMaxMB, out.MemoryMB)
	}
	out.Devices = c.devices(where, in)
	out.Networks = c.taskNetworks(where, in.Networks) // convert_network.go
	c.checkUnimplemented(where+" resources",
		unimplemented{"NUMA", "numa block", in.NUMA, rejected},
		unimplemented{"SecretsMB", "secrets", in.SecretsMB, ignored},
		unimplemented{"IOPS", "iops", in.IOPS, ignored},
	)
	return out
}

func (c *converter) constraints(where string, in []*api.Constraint) []*structs.Constraint {
	if in == nil {
		return nil
	}
	out := make([]*structs.Constraint, 0, len(in))
	for i, con := range in {
		if con == nil {
			c.errorf("%s: constraint %d is null", where, i+1)
			continue
		}
		op := con.Operand
		if op == "" {
			op = structs.ConstraintEqual
		}
		out = append(out, &structs.Constraint{LTarget: con.LTarget, RTarget: con.RTarget, Operand: op})
	}
	return out
}

// mergeRestart returns base with the fields set in over replacing its own.
func mergeRestart(base *structs.RestartPolicy, over *api.RestartPolicy) *structs.RestartPolicy {
	out := base.Copy()
	if over == nil {
		return out
	}
	if over.Attempts != nil {
		out.Attempts = *over.Attempts
	}
	if over.Interval != nil {
		out.Interval = *over.Interval
	}
	if over.Delay != nil {
		out.Delay = *over.Delay
	}
	if over.Mode != nil {
		out.Mode = *over.Mode
	}
	return out
}

func ephemeralDisk(in *api.EphemeralDisk) *structs.EphemeralDisk {
	out := structs.DefaultEphemeralDisk()
	if in == nil {
		return out
	}
	out.Sticky = deref(in.Sticky)
	out.Migrate = deref(in.Migrate)
	if in.SizeMB != nil {
		out.SizeMB = *in.SizeMB
	}
	return out
}

// logConfig converts a logs block. Disabled wins when set; otherwise an
// explicit Enabled=false (the field older Nomad versions used) disables.
func (c *converter) logConfig(where string, in *api.LogConfig) *structs.LogConfig {
	out := &structs.LogConfig{MaxFiles: defaultLogMaxFiles, MaxFileSizeMB: defaultLogMaxSize}
	if in == nil {
		return out
	}
	if in.MaxFiles != nil {
		out.MaxFiles = *in.MaxFiles
	}
	if in.MaxFileSizeMB != nil {
		out.MaxFileSizeMB = *in.MaxFileSizeMB
	}
	switch {
	case in.Disabled != nil:
		out.Disabled = *in.Disabled
	case in.Enabled != nil:
		out.Disabled = !*in.Enabled
	}
	if out.MaxFiles < 1 || out.MaxFileSizeMB < 1 {
		c.errorf("%s: logs max_files and max_file_size must be at least 1", where)
	}
	return out
}

// deref returns *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
