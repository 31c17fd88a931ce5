package jobspec

import (
	"encoding/json"

	"github.com/drover-io/drover/api"
	"github.com/hashicorp/hcl/v2"
)

// rawField routes the blocks of one not-yet-implemented feature to the
// json.RawMessage field that keeps them.
type rawField struct {
	typ string
	dst *json.RawMessage
	bs  rawBlock
}

// decodeRawFields fills every rawField from the blocks in c.
func (d *decoder) decodeRawFields(c *hcl.BodyContent, fields []rawField) {
	for _, f := range fields {
		if f.bs.unsupported {
			for _, b := range blocksOf(c, f.typ) {
				d.unsupported(b)
			}
			continue
		}
		*f.dst = d.rawBlocks(c, f.typ, f.bs)
	}
}

// rawHeaders are the block header schemas of fields.
func rawHeaders(fields []rawField) []hcl.BlockHeaderSchema {
	m := make(map[string]rawBlock, len(fields))
	for _, f := range fields {
		m[f.typ] = f.bs
	}
	return headers(m)
}

// unsupportedBlock marks a block that is rejected (see doc.go); label says
// whether the block takes a label.
func unsupportedBlock(typ string, label bool) rawField {
	bs := rawBlock{unsupported: true}
	if label {
		bs.label = "Name"
	}
	return rawField{typ: typ, dst: new(json.RawMessage), bs: bs}
}

var jobTypes = map[string]string{
	"service": "", "batch": "", "system": "", "sysbatch": "",
}

// job decodes a `job "ID" { ... }` block.
func (d *decoder) job(b *hcl.Block) *api.Job {
	job := &api.Job{ID: api.String(b.Labels[0])}
	var reschedule json.RawMessage
	var update json.RawMessage
	raw := []rawField{
		{"update", &update, rawBlock{key: "v", spec: updateSpec}},
		{"reschedule", &reschedule, rawBlock{key: "v", spec: rescheduleSpec}},
		{"migrate", &job.Migrate, rawBlock{key: "v", spec: migrateSpec}},
		{"ui", &job.UI, rawBlock{key: "v", spec: uiSpec}},
		unsupportedBlock("multiregion", false),
	}
	blocks := append(rawHeaders(raw),
		hcl.BlockHeaderSchema{Type: "meta"},
		hcl.BlockHeaderSchema{Type: "constraint"},
		hcl.BlockHeaderSchema{Type: "affinity"},
		hcl.BlockHeaderSchema{Type: "spread"},
		hcl.BlockHeaderSchema{Type: "group", LabelNames: []string{"name"}},
		hcl.BlockHeaderSchema{Type: "periodic"},      // periodic.go
		hcl.BlockHeaderSchema{Type: "parameterized"}, // periodic.go
	)
	c := d.content(b.Body, []string{"name", "type", "datacenters", "namespace", "region",
		"priority", "all_at_once", "meta", "node_pool"}, blocks...)

	job.Name = d.str(c.Attributes["name"])
	if job.Name == nil {
		job.Name = api.String(b.Labels[0])
	}
	if at := c.Attributes["type"]; at != nil {
		job.Type = d.str(at)
		if job.Type != nil {
			why, ok := jobTypes[*job.Type]
			switch {
			case !ok:
				d.errorf(at.Expr.Range(), "Invalid job type", "%q is not a job type; use \"service\", \"batch\", \"system\" or \"sysbatch\".", *job.Type)
			case why != "":
				d.errorf(at.Expr.Range(), "Unsupported job type", "%s", why)
			}
		}
	}
	job.Datacenters = d.strList(c.Attributes["datacenters"])
	job.Namespace = d.str(c.Attributes["namespace"])
	job.Region = d.str(c.Attributes["region"])
	job.Priority = d.integer(c.Attributes["priority"])
	job.AllAtOnce = d.boolean(c.Attributes["all_at_once"])
	job.NodePool = d.rawArg(c, "node_pool", rawString)
	job.Meta = d.stringMap(c, "meta")
	job.Constraints = d.constraints(c)
	job.Affinities = d.affinities(c) // placement.go
	job.Spreads = d.spreads(c)
	if pb := d.single(c, "periodic"); pb != nil {
		job.Periodic = d.periodic(pb)
	}
	if pb := d.single(c, "parameterized"); pb != nil {
		job.ParameterizedJob = d.parameterized(pb)
	}
	d.decodeRawFields(c, raw)
	job.Update = decodeUpdate(update)
	job.Reschedule = decodeReschedule(reschedule)

	seen := map[string]hcl.Range{}
	for _, gb := range blocksOf(c, "group") {
		name := gb.Labels[0]
		if prev, dup := seen[name]; dup {
			d.errorf(gb.LabelRanges[0], "Duplicate group", "A group named %q is already defined at %s.", name, lineCol1(prev))
			continue
		}
		seen[name] = gb.DefRange
		job.TaskGroups = append(job.TaskGroups, d.group(gb))
	}
	if len(job.TaskGroups) == 0 && len(seen) == 0 && !d.groupless {
		d.errorf(b.DefRange, "Missing group", "Job %q has no group; add a group block with at least one task.", b.Labels[0])
	}
	return job
}

// group decodes a `group "NAME" { ... }` block.
func (d *decoder) group(b *hcl.Block) *api.TaskGroup {
	g := &api.TaskGroup{Name: api.String(b.Labels[0])}
	var update, networks, reschedule, volumes, services json.RawMessage
	raw := []rawField{
		{"update", &update, rawBlock{key: "v", spec: updateSpec}},
		{"reschedule", &reschedule, rawBlock{key: "v", spec: rescheduleSpec}},
		{"migrate", &g.Migrate, rawBlock{key: "v", spec: migrateSpec}},
		{"network", &networks, rawBlock{key: "v", many: true, spec: networkSpec}},
		{"service", &services, rawBlock{key: "v", many: true, spec: serviceSpec}},
		{"volume", &volumes, rawBlock{key: "v", keyed: true, label: "Name", spec: volumeSpec}},
		{"scaling", &g.Scaling, rawBlock{key: "v", spec: scalingSpec}},
		{"consul", &g.Consul, rawBlock{key: "v", spec: consulSpec}},
		{"disconnect", &g.Disconnect, rawBlock{key: "v", spec: disconnectSpec}},
	}
	blocks := append(rawHeaders(raw),
		hcl.BlockHeaderSchema{Type: "meta"},
		hcl.BlockHeaderSchema{Type: "constraint"},
		hcl.BlockHeaderSchema{Type: "affinity"},
		hcl.BlockHeaderSchema{Type: "spread"},
		hcl.BlockHeaderSchema{Type: "restart"},
		hcl.BlockHeaderSchema{Type: "ephemeral_disk"},
		hcl.BlockHeaderSchema{Type: "task", LabelNames: []string{"name"}},
	)
	c := d.content(b.Body, []string{"count", "meta", "shutdown_delay", "max_client_disconnect",
		"stop_after_client_disconnect", "prevent_reschedule_on_lost"}, blocks...)

	g.Count = d.nonNegative(c.Attributes["count"])
	g.Meta = d.stringMap(c, "meta")
	g.Constraints = d.constraints(c)
	g.Affinities = d.affinities(c)
	g.Spreads = d.spreads(c)
	if rb := d.single(c, "restart"); rb != nil {
		g.RestartPolicy = d.restart(rb)
	}
	if eb := d.single(c, "ephemeral_disk"); eb != nil {
		g.EphemeralDisk = d.ephemeralDisk(eb)
	}
	g.ShutdownDelay = d.rawArg(c, "shutdown_delay", rawDuration)
	g.MaxClientDisconnect = d.rawArg(c, "max_client_disconnect", rawDuration)
	g.StopAfterClientDisconnect = d.rawArg(c, "stop_after_client_disconnect", rawDuration)
	g.PreventRescheduleOnLost = d.rawArg(c, "prevent_reschedule_on_lost", rawBool)
	d.decodeRawFields(c, raw)
	g.Update = decodeUpdate(update)
	g.Networks = decodeNetworks(networks)
	g.Volumes = decodeTyped[map[string]*api.VolumeRequest](volumes)
	g.Services = decodeTyped[[]*api.Service](services)
	g.ReschedulePolicy = decodeReschedule(reschedule)

	seen := map[string]hcl.Range{}
	for _, tb := range blocksOf(c, "task") {
		name := tb.Labels[0]
		if prev, dup := seen[name]; dup {
			d.errorf(tb.LabelRanges[0], "Duplicate task", "A task named %q is already defined in group %q at %s.", name, b.Labels[0], lineCol1(prev))
			continue
		}
		seen[name] = tb.DefRange
		g.Tasks = append(g.Tasks, d.task(tb))
	}
	if len(seen) == 0 {
		d.errorf(b.DefRange, "Missing task", "Group %q has no task; add a task block.", b.Labels[0])
	}
	return g
}

// restart decodes a `restart { ... }` block (group or task).
func (d *decoder) restart(b *hcl.Block) *api.RestartPolicy {
	c := d.content(b.Body, []string{"attempts", "interval", "delay", "mode", "render_templates"})
	rp := &api.RestartPolicy{
		Attempts: d.nonNegative(c.Attributes["attempts"]),
		Interval: d.duration(c.Attributes["interval"]),
		Delay:    d.duration(c.Attributes["delay"]),
		Mode:     d.str(c.Attributes["mode"]),
	}
	if rp.Mode != nil && *rp.Mode != "fail" && *rp.Mode != "delay" {
		d.errorf(c.Attributes["mode"].Expr.Range(), "Invalid restart mode", "%q is not a restart mode; use \"fail\" or \"delay\".", *rp.Mode)
	}
	rp.RenderTemplates = d.rawArg(c, "render_templates", rawBool)
	return rp
}

// ephemeralDisk decodes an `ephemeral_disk { ... }` block.
func (d *decoder) ephemeralDisk(b *hcl.Block) *api.EphemeralDisk {
	c := d.content(b.Body, []string{"size", "sticky", "migrate"})
	return &api.EphemeralDisk{
		SizeMB:  d.nonNegative(c.Attributes["size"]),
		Sticky:  d.boolean(c.Attributes["sticky"]),
		Migrate: d.boolean(c.Attributes["migrate"]),
	}
}

// decodeUpdate turns the JSON the update block decoded to (Nomad's API
// shape, see updateSpec) into the typed strategy; nil when there is none.
func decodeUpdate(raw json.RawMessage) *api.UpdateStrategy {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var u api.UpdateStrategy
	if err := json.Unmarshal(raw, &u); err != nil {
		// Unreachable: rawObject built raw from updateSpec's typed
		// arguments, and reported any argument it could not decode.
		return nil
	}
	return &u
}

// decodeNetworks turns the JSON the network blocks decoded to (Nomad's API
// shape, see networkSpec) into the typed network resources; nil when there
// are none.
func decodeNetworks(raw json.RawMessage) []*api.NetworkResource {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var out []*api.NetworkResource
	if err := json.Unmarshal(raw, &out); err != nil {
		// Unreachable: rawBlocks built raw from networkSpec's typed
		// arguments, and reported any argument it could not decode.
		return nil
	}
	return out
}

// decodeTyped turns the JSON a raw block decoded to (Nomad's API shape, as
// its spec builds it) into its typed API value; the zero value when the
// block is absent.
func decodeTyped[T any](raw json.RawMessage) T {
	var out T
	if len(raw) == 0 || string(raw) == "null" {
		return out
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		// Unreachable: rawBlocks built raw from the spec's typed
		// arguments, and reported any argument it could not decode.
		var zero T
		return zero
	}
	return out
}

// decodeReschedule decodes the canonical JSON of a reschedule block.
func decodeReschedule(raw json.RawMessage) *api.ReschedulePolicy {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var out api.ReschedulePolicy
	if err := json.Unmarshal(raw, &out); err != nil {
		// Unreachable: rawBlocks built raw from rescheduleSpec's typed
		// arguments, and reported any argument it could not decode.
		return nil
	}
	return &out
}
