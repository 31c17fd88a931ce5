package acl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The coarse policy levels a rule's policy attribute takes.
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyWrite = "write"
	PolicyScale = "scale" // namespace rules only
	PolicyList  = "list"  // plugin rules only
)

// The capabilities of a namespace rule (its capabilities list, or what its
// policy expands to).
const (
	NamespaceCapabilityDeny                 = "deny"
	NamespaceCapabilityListJobs             = "list-jobs"
	NamespaceCapabilityParseJob             = "parse-job"
	NamespaceCapabilityReadJob              = "read-job"
	NamespaceCapabilitySubmitJob            = "submit-job"
	NamespaceCapabilityDispatchJob          = "dispatch-job"
	NamespaceCapabilityReadLogs             = "read-logs"
	NamespaceCapabilityReadFS               = "read-fs"
	NamespaceCapabilityAllocExec            = "alloc-exec"
	NamespaceCapabilityAllocNodeExec        = "alloc-node-exec"
	NamespaceCapabilityAllocLifecycle       = "alloc-lifecycle"
	NamespaceCapabilityCSIRegisterPlugin    = "csi-register-plugin"
	NamespaceCapabilityCSIWriteVolume       = "csi-write-volume"
	NamespaceCapabilityCSIReadVolume        = "csi-read-volume"
	NamespaceCapabilityCSIListVolume        = "csi-list-volume"
	NamespaceCapabilityCSIMountVolume       = "csi-mount-volume"
	NamespaceCapabilityListScalingPolicies  = "list-scaling-policies"
	NamespaceCapabilityReadScalingPolicy    = "read-scaling-policy"
	NamespaceCapabilityReadJobScaling       = "read-job-scaling"
	NamespaceCapabilityScaleJob             = "scale-job"
	NamespaceCapabilitySubmitRecommendation = "submit-recommendation"
	NamespaceCapabilitySentinelOverride     = "sentinel-override"
	NamespaceCapabilityHostVolumeCreate     = "host-volume-create"
	NamespaceCapabilityHostVolumeRegister   = "host-volume-register"
	NamespaceCapabilityHostVolumeRead       = "host-volume-read"
	NamespaceCapabilityHostVolumeWrite      = "host-volume-write"
	NamespaceCapabilityHostVolumeDelete     = "host-volume-delete"
)

// The capabilities of a variables path rule.
const (
	VariablesCapabilityWrite   = "write"
	VariablesCapabilityRead    = "read"
	VariablesCapabilityList    = "list"
	VariablesCapabilityDestroy = "destroy"
	VariablesCapabilityDeny    = "deny"
)

// The capabilities of a host_volume rule.
const (
	HostVolumeCapabilityDeny           = "deny"
	HostVolumeCapabilityMountReadOnly  = "mount-readonly"
	HostVolumeCapabilityMountReadWrite = "mount-readwrite"
)

var namespaceCapabilities = []string{
	NamespaceCapabilityDeny, NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
	NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob, NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS,
	NamespaceCapabilityAllocExec, NamespaceCapabilityAllocNodeExec, NamespaceCapabilityAllocLifecycle,
	NamespaceCapabilityCSIRegisterPlugin, NamespaceCapabilityCSIWriteVolume, NamespaceCapabilityCSIReadVolume,
	NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIMountVolume, NamespaceCapabilityListScalingPolicies,
	NamespaceCapabilityReadScalingPolicy, NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob,
	NamespaceCapabilitySubmitRecommendation, NamespaceCapabilitySentinelOverride,
	NamespaceCapabilityHostVolumeCreate, NamespaceCapabilityHostVolumeRegister, NamespaceCapabilityHostVolumeRead,
	NamespaceCapabilityHostVolumeWrite, NamespaceCapabilityHostVolumeDelete,
}

var variableCapabilities = []string{
	VariablesCapabilityWrite, VariablesCapabilityRead, VariablesCapabilityList, VariablesCapabilityDestroy, VariablesCapabilityDeny,
}

var hostVolumeCapabilities = []string{
	HostVolumeCapabilityDeny, HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite,
}

// Policy is a parsed policy document: its rules, not yet merged with other
// policies' (New compiles them into an ACL).
type Policy struct {
	Namespaces  []*NamespaceRule
	HostVolumes []*HostVolumeRule
	// The coarse rules: "" when the policy has none.
	Node     string
	Agent    string
	Operator string
	Quota    string
	Plugin   string
}

// NamespaceRule is a namespace "NAME" { ... } block: NAME may be a glob.
type NamespaceRule struct {
	Name   string
	Policy string
	// Capabilities holds the listed capabilities and those the policy
	// expands to.
	Capabilities []string
	Variables    []*VariablesPathRule
}

// VariablesPathRule is a variables { path "PATH" { capabilities } } block
// of a namespace rule: PATH may be a glob.
type VariablesPathRule struct {
	Path         string
	Capabilities []string
}

// HostVolumeRule is a host_volume "NAME" { ... } block.
type HostVolumeRule struct {
	Name         string
	Policy       string
	Capabilities []string
}

// expandNamespacePolicy returns the capabilities a namespace policy level
// grants.
func expandNamespacePolicy(policy string) []string {
	read := []string{
		NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
		NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIReadVolume, NamespaceCapabilityReadJobScaling,
		NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy, NamespaceCapabilityHostVolumeRead,
	}
	switch policy {
	case PolicyDeny:
		return []string{NamespaceCapabilityDeny}
	case PolicyRead:
		return read
	case PolicyWrite:
		return append(read,
			NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob,
			NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec,
			NamespaceCapabilityAllocLifecycle, NamespaceCapabilityCSIMountVolume, NamespaceCapabilityCSIWriteVolume,
			NamespaceCapabilitySubmitRecommendation, NamespaceCapabilityHostVolumeCreate, NamespaceCapabilityHostVolumeWrite)
	case PolicyScale:
		return []string{
			NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
			NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob,
		}
	}
	return nil
}

// expandNamespaceVariables returns the variables capabilities a namespace
// policy level grants on every path.
func expandNamespaceVariables(policy string) []string {
	switch policy {
	case PolicyRead:
		return []string{VariablesCapabilityRead, VariablesCapabilityList}
	case PolicyWrite:
		return []string{VariablesCapabilityRead, VariablesCapabilityList, VariablesCapabilityWrite, VariablesCapabilityDestroy}
	}
	return nil
}

// expandHostVolumePolicy returns the capabilities a host_volume policy
// level grants.
func expandHostVolumePolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{HostVolumeCapabilityDeny}
	case PolicyRead:
		return []string{HostVolumeCapabilityMountReadOnly}
	case PolicyWrite:
		return []string{HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite}
	}
	return nil
}

// Parse parses a policy document in Nomad's rule language (HCL); filename
// names it in errors, which give the line and column of what is wrong.
func Parse(filename, rules string) (*Policy, error) {
	if strings.TrimSpace(rules) == "" {
		return nil, fmt.Errorf("%s: the policy has no rules", filename)
	}
	f, diags := hclsyntax.ParseConfig([]byte(rules), filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse policy: %s", formatDiags(diags))
	}
	p := &parser{}
	body := f.Body.(*hclsyntax.Body)
	pol := &Policy{}
	for _, name := range sortedAttrs(body) {
		a := body.Attributes[name]
		var target *string
		var allowed []string
		switch a.Name {
		case "node":
			target, allowed = &pol.Node, []string{PolicyDeny, PolicyRead, PolicyWrite}
		case "agent":
			target, allowed = &pol.Agent, []string{PolicyDeny, PolicyRead, PolicyWrite}
		case "operator":
			target, allowed = &pol.Operator, []string{PolicyDeny, PolicyRead, PolicyWrite}
		case "quota":
			target, allowed = &pol.Quota, []string{PolicyDeny, PolicyRead, PolicyWrite}
		case "plugin":
			target, allowed = &pol.Plugin, []string{PolicyDeny, PolicyRead, PolicyList}
		default:
			p.errorf(a.SrcRange, "unknown attribute %q: a policy holds namespace, host_volume, node, agent, operator, quota and plugin rules", a.Name)
			continue
		}
		*target = p.level(a, allowed)
	}
	for _, b := range body.Blocks {
		switch b.Type {
		case "node", "agent", "operator", "quota", "plugin":
			// The block form: node { policy = "read" }.
			if len(b.Labels) != 0 {
				p.errorf(b.TypeRange, "%s takes no label", b.Type)
				continue
			}
			allowed := []string{PolicyDeny, PolicyRead, PolicyWrite}
			if b.Type == "plugin" {
				allowed = []string{PolicyDeny, PolicyRead, PolicyList}
			}
			var level string
			for _, name := range sortedAttrs(b.Body) {
				a := b.Body.Attributes[name]
				if a.Name != "policy" {
					p.errorf(a.SrcRange, "unknown attribute %q in %s: it takes policy", a.Name, b.Type)
					continue
				}
				level = p.level(a, allowed)
			}
			p.noBlocks(b)
			switch b.Type {
			case "node":
				pol.Node = level
			case "agent":
				pol.Agent = level
			case "operator":
				pol.Operator = level
			case "quota":
				pol.Quota = level
			case "plugin":
				pol.Plugin = level
			}
		case "namespace":
			if r := p.namespace(b); r != nil {
				pol.Namespaces = append(pol.Namespaces, r)
			}
		case "host_volume":
			if r := p.hostVolume(b); r != nil {
				pol.HostVolumes = append(pol.HostVolumes, r)
			}
		default:
			p.errorf(b.TypeRange, "unknown block %q: a policy holds namespace, host_volume, node, agent, operator, quota and plugin rules", b.Type)
		}
	}
	if p.diags.HasErrors() {
		return nil, fmt.Errorf("invalid policy: %s", formatDiags(p.diags))
	}
	return pol, nil
}

// parser collects the errors of one document.
type parser struct {
	diags hcl.Diagnostics
}

func (p *parser) errorf(rng hcl.Range, format string, args ...any) {
	r := rng
	p.diags = append(p.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf(format, args...), Subject: &r})
}

func sortedAttrs(b *hclsyntax.Body) []string {
	names := make([]string, 0, len(b.Attributes))
	for n := range b.Attributes {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int {
		return b.Attributes[x].SrcRange.Start.Byte - b.Attributes[y].SrcRange.Start.Byte
	})
	return names
}

func (p *parser) noBlocks(b *hclsyntax.Block) {
	for _, inner := range b.Body.Blocks {
		p.errorf(inner.TypeRange, "unknown block %q in %s", inner.Type, b.Type)
	}
}

// str evaluates a literal string attribute.
func (p *parser) str(a *hclsyntax.Attribute) (string, bool) {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		p.diags = append(p.diags, diags...)
		return "", false
	}
	if v.IsNull() || !v.Type().Equals(cty.String) {
		p.errorf(a.Expr.Range(), "%s must be a string", a.Name)
		return "", false
	}
	return v.AsString(), true
}

// level evaluates a policy attribute that must be one of allowed.
func (p *parser) level(a *hclsyntax.Attribute, allowed []string) string {
	s, ok := p.str(a)
	if !ok {
		return ""
	}
	if !slices.Contains(allowed, s) {
		p.errorf(a.Expr.Range(), "invalid policy %q: use one of %s", s, strings.Join(allowed, ", "))
		return ""
	}
	return s
}

// list evaluates a list of strings each of which must be in allowed.
func (p *parser) list(a *hclsyntax.Attribute, allowed []string) []string {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		p.diags = append(p.diags, diags...)
		return nil
	}
	if v.IsNull() || !(v.Type().IsTupleType() || v.Type().IsListType()) {
		p.errorf(a.Expr.Range(), "%s must be a list of strings", a.Name)
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.Type().Equals(cty.String) {
			p.errorf(a.Expr.Range(), "%s must be a list of strings", a.Name)
			return nil
		}
		s := e.AsString()
		if !slices.Contains(allowed, s) {
			p.errorf(a.Expr.Range(), "invalid capability %q: use one of %s", s, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (p *parser) label(b *hclsyntax.Block) (string, bool) {
	if len(b.Labels) != 1 {
		p.errorf(b.TypeRange, "%s takes one label: its name (a glob may use *)", b.Type)
		return "", false
	}
	return b.Labels[0], true
}

func (p *parser) namespace(b *hclsyntax.Block) *NamespaceRule {
	name, ok := p.label(b)
	if !ok {
		return nil
	}
	r := &NamespaceRule{Name: name}
	for _, an := range sortedAttrs(b.Body) {
		a := b.Body.Attributes[an]
		switch a.Name {
		case "policy":
			r.Policy = p.level(a, []string{PolicyDeny, PolicyRead, PolicyWrite, PolicyScale})
		case "capabilities":
			r.Capabilities = append(r.Capabilities, p.list(a, namespaceCapabilities)...)
		default:
			p.errorf(a.SrcRange, "unknown attribute %q in namespace %q: it takes policy and capabilities", a.Name, name)
		}
	}
	r.Capabilities = append(r.Capabilities, expandNamespacePolicy(r.Policy)...)
	for _, inner := range b.Body.Blocks {
		if inner.Type != "variables" {
			p.errorf(inner.TypeRange, "unknown block %q in namespace %q: it takes variables", inner.Type, name)
			continue
		}
		if len(inner.Labels) != 0 {
			p.errorf(inner.TypeRange, "variables takes no label")
			continue
		}
		for _, an := range sortedAttrs(inner.Body) {
			p.errorf(inner.Body.Attributes[an].SrcRange, "unknown attribute %q in variables: it takes path blocks", an)
		}
		for _, pb := range inner.Body.Blocks {
			if pb.Type != "path" {
				p.errorf(pb.TypeRange, "unknown block %q in variables: it takes path blocks", pb.Type)
				continue
			}
			path, ok := p.label(pb)
			if !ok {
				continue
			}
			pr := &VariablesPathRule{Path: path}
			for _, an := range sortedAttrs(pb.Body) {
				a := pb.Body.Attributes[an]
				if a.Name != "capabilities" {
					p.errorf(a.SrcRange, "unknown attribute %q in path %q: it takes capabilities", a.Name, path)
					continue
				}
				pr.Capabilities = append(pr.Capabilities, p.list(a, variableCapabilities)...)
			}
			p.noBlocks(pb)
			r.Variables = append(r.Variables, pr)
		}
	}
	return r
}

func (p *parser) hostVolume(b *hclsyntax.Block) *HostVolumeRule {
	name, ok := p.label(b)
	if !ok {
		return nil
	}
	r := &HostVolumeRule{Name: name}
	for _, an := range sortedAttrs(b.Body) {
		a := b.Body.Attributes[an]
		switch a.Name {
		case "policy":
			r.Policy = p.level(a, []string{PolicyDeny, PolicyRead, PolicyWrite})
		case "capabilities":
			r.Capabilities = append(r.Capabilities, p.list(a, hostVolumeCapabilities)...)
		default:
			p.errorf(a.SrcRange, "unknown attribute %q in host_volume %q: it takes policy and capabilities", a.Name, name)
		}
	}
	p.noBlocks(b)
	r.Capabilities = append(r.Capabilities, expandHostVolumePolicy(r.Policy)...)
	return r
}

// formatDiags writes each error as "file:line:col: what", joined by "; ".
func formatDiags(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			msg = fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}
