package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// fileConfig is one agent configuration file as written: pointers and nil
// slices are "not set", so that merging knows what a later file sets.
// The keys are documented in docs/agent-config.md.
type fileConfig struct {
	Name       *string `hcl:"name,optional"`
	Region     *string `hcl:"region,optional"`
	Datacenter *string `hcl:"datacenter,optional"`
	DataDir    *string `hcl:"data_dir,optional"`
	PluginDir  *string `hcl:"plugin_dir,optional"`
	BindAddr   *string `hcl:"bind_addr,optional"`
	LogLevel   *string `hcl:"log_level,optional"`

	Ports     *portsBlock     `hcl:"ports,block"`
	Addresses *addressesBlock `hcl:"addresses,block"`
	Server    *serverBlock    `hcl:"server,block"`
	Client    *clientBlock    `hcl:"client,block"`
	Plugins   []*pluginBlock  `hcl:"plugin,block"`
}

type portsBlock struct {
	HTTP *int `hcl:"http,optional"`
	RPC  *int `hcl:"rpc,optional"`
}

type addressesBlock struct {
	HTTP *string `hcl:"http,optional"`
	RPC  *string `hcl:"rpc,optional"`
}

type serverBlock struct {
	Enabled         *bool   `hcl:"enabled,optional"`
	BootstrapExpect *int    `hcl:"bootstrap_expect,optional"`
	HeartbeatGrace  *string `hcl:"heartbeat_grace,optional"`
	MinHeartbeatTTL *string `hcl:"min_heartbeat_ttl,optional"`
	NumSchedulers   *int    `hcl:"num_schedulers,optional"`
	JobMaxCount     *int    `hcl:"job_max_count,optional"`
	EvalNackTimeout *string `hcl:"eval_nack_timeout,optional"`
}

type clientBlock struct {
	Enabled               *bool          `hcl:"enabled,optional"`
	Servers               []string       `hcl:"servers,optional"`
	NodeClass             *string        `hcl:"node_class,optional"`
	AllocDir              *string        `hcl:"alloc_dir,optional"`
	StateDir              *string        `hcl:"state_dir,optional"`
	GCInterval            *string        `hcl:"gc_interval,optional"`
	GCMaxAllocs           *int           `hcl:"gc_max_allocs,optional"`
	GCDiskUsageThreshold  *float64       `hcl:"gc_disk_usage_threshold,optional"`
	GCInodeUsageThreshold *float64       `hcl:"gc_inode_usage_threshold,optional"`
	Meta                  *metaBlock     `hcl:"meta,block"`
	Reserved              *reservedBlock `hcl:"reserved,block"`
}

// metaBlock is `meta { key = "value" ... }`.
type metaBlock struct {
	Attrs hcl.Attributes `hcl:",remain"`
}

type reservedBlock struct {
	CPU    *int `hcl:"cpu,optional"`
	Memory *int `hcl:"memory,optional"`
	Disk   *int `hcl:"disk,optional"`
}

// pluginBlock is `plugin "NAME" { config { ... } }`.
type pluginBlock struct {
	Name   string      `hcl:"name,label"`
	Config *configBody `hcl:"config,block"`
}

type configBody struct {
	Body hcl.Body `hcl:",remain"`
}

// parsedFile is a decoded file plus what its free-form parts hold.
type parsedFile struct {
	path string
	cfg  fileConfig
	meta map[string]string
	// plugins holds each plugin block's config as JSON, by plugin name.
	plugins map[string]json.RawMessage
}

// loadConfigPaths reads each path in order: a file (.hcl or .json), or a
// directory whose .hcl and .json files are read in lexical order. Later
// files win when merged.
func loadConfigPaths(paths []string) ([]*parsedFile, error) {
	var out []*parsedFile
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		files := []string{p}
		if info.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("read config directory: %w", err)
			}
			files = files[:0]
			for _, e := range entries {
				ext := filepath.Ext(e.Name())
				if e.Type().IsRegular() && (ext == ".hcl" || ext == ".json") {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
			sort.Strings(files)
		}
		for _, f := range files {
			pf, err := parseConfigFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, pf)
		}
	}
	return out, nil
}

// parseConfigFile decodes one file; an unknown key, a wrong type or a
// malformed file is an error naming file:line:col.
func parseConfigFile(path string) (*parsedFile, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return parseConfig(path, src)
}

// parseConfig decodes src, named path (.json is JSON, anything else HCL).
func parseConfig(path string, src []byte) (*parsedFile, error) {
	p := hclparse.NewParser()
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.EqualFold(filepath.Ext(path), ".json") {
		f, diags = p.ParseJSON(src, path)
	} else {
		f, diags = p.ParseHCL(src, path)
	}
	if diags.HasErrors() {
		return nil, diagError(path, diags)
	}
	pf := &parsedFile{path: path}
	if diags := gohcl.DecodeBody(f.Body, nil, &pf.cfg); diags.HasErrors() {
		return nil, diagError(path, diags)
	}
	if c := pf.cfg.Client; c != nil && c.Meta != nil {
		pf.meta = map[string]string{}
		for name, attr := range c.Meta.Attrs {
			var v string
			if diags := gohcl.DecodeExpression(attr.Expr, nil, &v); diags.HasErrors() {
				return nil, diagError(path, diags)
			}
			pf.meta[name] = v
		}
	}
	for _, pb := range pf.cfg.Plugins {
		if pf.plugins == nil {
			pf.plugins = map[string]json.RawMessage{}
		}
		if _, dup := pf.plugins[pb.Name]; dup {
			return nil, fmt.Errorf("%s: plugin %q is configured twice in one file", path, pb.Name)
		}
		obj := map[string]any{}
		if pb.Config != nil {
			var d hcl.Diagnostics
			obj, d = freeformBody(pb.Config.Body)
			if d.HasErrors() {
				return nil, diagError(path, d)
			}
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: plugin %q config: %w", path, pb.Name, err)
		}
		pf.plugins[pb.Name] = raw
	}
	return pf, nil
}

// freeformBody turns a plugin's config body into a JSON-ready map: each
// argument its value, each nested block appended to a list of maps under
// its type (the shape a task driver's config has in a job).
func freeformBody(body hcl.Body) (map[string]any, hcl.Diagnostics) {
	out := map[string]any{}
	var diags hcl.Diagnostics
	sb, ok := body.(*hclsyntax.Body)
	if !ok { // JSON: every property is an attribute
		attrs, d := body.JustAttributes()
		diags = append(diags, d...)
		for name, attr := range attrs {
			v, d := exprValue(attr.Expr)
			diags = append(diags, d...)
			out[name] = v
		}
		return out, diags
	}
	for name, attr := range sb.Attributes {
		v, d := exprValue(attr.Expr)
		diags = append(diags, d...)
		out[name] = v
	}
	for _, b := range sb.Blocks {
		if _, clash := sb.Attributes[b.Type]; clash {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate " + b.Type,
				Detail: b.Type + " is set both as an argument and as a block; use one of them.", Subject: b.DefRange().Ptr()})
			continue
		}
		v, d := freeformBody(b.Body)
		diags = append(diags, d...)
		var val any = v
		for i := len(b.Labels) - 1; i >= 0; i-- {
			val = map[string]any{b.Labels[i]: []any{val}}
		}
		list, _ := out[b.Type].([]any)
		out[b.Type] = append(list, val)
	}
	return out, diags
}

// exprValue evaluates a constant expression into a JSON-ready value.
func exprValue(expr hcl.Expression) (any, hcl.Diagnostics) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		return nil, diags
	}
	raw, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unsupported value",
			Detail: err.Error(), Subject: expr.Range().Ptr()}}
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unsupported value",
			Detail: err.Error(), Subject: expr.Range().Ptr()}}
	}
	return out, nil
}

// diagError formats HCL diagnostics as "file:line:col: summary; detail",
// one per line.
func diagError(path string, diags hcl.Diagnostics) error {
	var msgs []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		where := path
		if d.Subject != nil {
			where = fmt.Sprintf("%s:%d:%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		msg := where + ": " + d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return errors.New(path + ": invalid configuration")
	}
	return fmt.Errorf("invalid agent configuration: %s", strings.Join(msgs, "\n"))
}
