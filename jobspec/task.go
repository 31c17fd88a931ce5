package jobspec

import (
	"encoding/json"

	"github.com/drover-io/drover/api"
	"github.com/hashicorp/hcl/v2"
)

var lifecycleHooks = map[string]bool{"prestart": true, "poststart": true, "poststop": true}

// task decodes a `task "NAME" { ... }` block.
func (d *decoder) task(b *hcl.Block) *api.Task {
	t := &api.Task{Name: b.Labels[0]}
	var identities, artifacts, templates, volumeMounts, services json.RawMessage
	raw := []rawField{
		{"service", &services, rawBlock{key: "v", many: true, spec: serviceSpec}},
		{"artifact", &artifacts, rawBlock{key: "v", many: true, spec: artifactSpec}},
		{"template", &templates, rawBlock{key: "v", many: true, spec: templateSpec}},
		{"volume_mount", &volumeMounts, rawBlock{key: "v", many: true, spec: volumeMountSpec}},
		{"vault", &t.Vault, rawBlock{key: "v", spec: vaultSpec}},
		{"consul", &t.Consul, rawBlock{key: "v", spec: consulSpec}},
		{"identity", &identities, rawBlock{key: "v", many: true, spec: identitySpec}},
		unsupportedBlock("csi_plugin", false),
		{"scaling", &t.ScalingPolicies, rawBlock{key: "v", many: true, label: "Type", spec: scalingSpec}},
		unsupportedBlock("action", true),
		unsupportedBlock("schedule", false),
		unsupportedBlock("secret", true),
	}
	blocks := append(rawHeaders(raw),
		hcl.BlockHeaderSchema{Type: "config"},
		hcl.BlockHeaderSchema{Type: "env"},
		hcl.BlockHeaderSchema{Type: "meta"},
		hcl.BlockHeaderSchema{Type: "resources"},
		hcl.BlockHeaderSchema{Type: "lifecycle"},
		hcl.BlockHeaderSchema{Type: "logs"},
		hcl.BlockHeaderSchema{Type: "restart"},
		hcl.BlockHeaderSchema{Type: "constraint"},
		hcl.BlockHeaderSchema{Type: "affinity"},
		hcl.BlockHeaderSchema{Type: "dispatch_payload"}, // periodic.go
	)
	c := d.content(b.Body, []string{"driver", "user", "env", "meta", "kill_timeout",
		"kill_signal", "leader", "shutdown_delay", "kind"}, blocks...)

	if at := c.Attributes["driver"]; at != nil {
		if s := d.str(at); s != nil {
			t.Driver = *s
			if t.Driver == "" {
				d.errorf(at.Expr.Range(), "Missing driver", "Task %q needs a driver, such as \"docker\", \"exec\" or \"raw_exec\".", t.Name)
			}
		}
	} else {
		d.errorf(b.DefRange, "Missing driver", "Task %q needs a driver argument, such as driver = \"docker\".", t.Name)
	}
	t.User = d.strVal(c.Attributes["user"])
	if cb := d.single(c, "config"); cb != nil {
		t.Config = d.freeform(cb.Body)
	}
	t.Env = d.stringMap(c, "env")
	t.Meta = d.stringMap(c, "meta")
	t.KillTimeout = d.duration(c.Attributes["kill_timeout"])
	t.KillSignal = d.strVal(c.Attributes["kill_signal"])
	if v := d.boolean(c.Attributes["leader"]); v != nil {
		t.Leader = *v
	}
	t.Constraints = d.constraints(c)
	t.Affinities = d.affinities(c)
	if rb := d.single(c, "resources"); rb != nil {
		t.Resources = d.resources(rb)
	}
	if lb := d.single(c, "lifecycle"); lb != nil {
		t.Lifecycle = d.lifecycle(lb)
	}
	if lb := d.single(c, "logs"); lb != nil {
		t.LogConfig = d.logs(lb)
	}
	if rb := d.single(c, "restart"); rb != nil {
		t.RestartPolicy = d.restart(rb)
	}
	if pb := d.single(c, "dispatch_payload"); pb != nil {
		t.DispatchPayload = d.dispatchPayload(pb)
	}
	t.ShutdownDelay = d.rawArg(c, "shutdown_delay", rawDuration)
	t.Kind = d.rawArg(c, "kind", rawString)
	d.decodeRawFields(c, raw)
	d.splitIdentities(t, blocksOf(c, "identity"), identities)
	t.Artifacts = decodeArtifacts(artifacts)
	t.VolumeMounts = decodeTyped[[]*api.VolumeMount](volumeMounts)
	t.Services = decodeTyped[[]*api.Service](services)
	t.Templates = d.templates(templates, blocksOf(c, "template")) // template.go
	return t
}

// decodeArtifacts turns the JSON the artifact blocks decoded to (Nomad's
// API shape, see artifactSpec) into the typed artifacts; nil when there
// are none.
func decodeArtifacts(raw json.RawMessage) []*api.TaskArtifact {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var out []*api.TaskArtifact
	if err := json.Unmarshal(raw, &out); err != nil {
		// Unreachable: rawBlocks built raw from artifactSpec's typed
		// arguments, and reported any argument it could not decode.
		return nil
	}
	return out
}

// splitIdentities puts the unnamed identity block in Task.Identity and the
// named ones in Task.Identities, as Nomad's API does.
func (d *decoder) splitIdentities(t *api.Task, blocks []*hcl.Block, all json.RawMessage) {
	if all == nil {
		return
	}
	var list []map[string]any
	if err := json.Unmarshal(all, &list); err != nil || len(list) != len(blocks) {
		return // a block had errors, already reported
	}
	var named []map[string]any
	for i, id := range list {
		if name, _ := id["Name"].(string); name != "" {
			named = append(named, id)
			continue
		}
		if t.Identity != nil {
			d.errorf(blocks[i].DefRange, "Duplicate identity block", "Only one identity block may be unnamed; give this one a name.")
			continue
		}
		t.Identity = d.toJSON(id, blocks[i].DefRange)
	}
	if named != nil {
		t.Identities = d.toJSON(named, blocks[0].DefRange)
	}
}

// resources decodes a task's `resources { ... }` block.
func (d *decoder) resources(b *hcl.Block) *api.Resources {
	r := &api.Resources{}
	var networks json.RawMessage
	raw := []rawField{
		{"network", &networks, rawBlock{key: "v", many: true, spec: networkSpec}},
		{"device", &r.Devices, rawBlock{key: "v", many: true, label: "Name", spec: deviceSpec}},
		{"numa", &r.NUMA, rawBlock{key: "v", spec: numaSpec}},
	}
	c := d.content(b.Body, []string{"cpu", "cores", "memory", "memory_max", "disk", "iops", "secrets"}, rawHeaders(raw)...)
	r.CPU = d.nonNegative(c.Attributes["cpu"])
	r.Cores = d.nonNegative(c.Attributes["cores"])
	r.MemoryMB = d.nonNegative(c.Attributes["memory"])
	r.MemoryMaxMB = d.nonNegative(c.Attributes["memory_max"])
	r.DiskMB = d.nonNegative(c.Attributes["disk"])
	r.IOPS = d.rawArg(c, "iops", rawInt)
	r.SecretsMB = d.rawArg(c, "secrets", rawInt)
	d.decodeRawFields(c, raw)
	r.Networks = decodeNetworks(networks)
	return r
}

// lifecycle decodes a `lifecycle { hook, sidecar }` block.
func (d *decoder) lifecycle(b *hcl.Block) *api.TaskLifecycle {
	c := d.content(b.Body, []string{"hook", "sidecar"})
	lc := &api.TaskLifecycle{}
	at := c.Attributes["hook"]
	if at == nil {
		d.errorf(b.DefRange, "Missing lifecycle hook", "A lifecycle block needs hook = \"prestart\", \"poststart\" or \"poststop\".")
	} else if s := d.str(at); s != nil {
		lc.Hook = *s
		if !lifecycleHooks[lc.Hook] {
			d.errorf(at.Expr.Range(), "Invalid lifecycle hook", "%q is not a lifecycle hook; use \"prestart\", \"poststart\" or \"poststop\".", lc.Hook)
		}
	}
	if v := d.boolean(c.Attributes["sidecar"]); v != nil {
		lc.Sidecar = *v
	}
	return lc
}

// logs decodes a `logs { ... }` block.
func (d *decoder) logs(b *hcl.Block) *api.LogConfig {
	c := d.content(b.Body, []string{"max_files", "max_file_size", "disabled", "enabled"})
	return &api.LogConfig{
		MaxFiles:      d.nonNegative(c.Attributes["max_files"]),
		MaxFileSizeMB: d.nonNegative(c.Attributes["max_file_size"]),
		Disabled:      d.boolean(c.Attributes["disabled"]),
		Enabled:       d.boolean(c.Attributes["enabled"]),
	}
}
