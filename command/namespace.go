package command

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/drover-io/drover/api"
)

// maxNamespaceSpec bounds what `namespace apply` reads from a file or
// stdin.
const maxNamespaceSpec = 1 << 20

// namespaceName is what a namespace's name may be (as the servers check).
var namespaceName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// printFormatted prints v as JSON (asJSON) or through the Go template
// tmpl; done is false when neither was asked for.
func (m *Meta) printFormatted(v any, asJSON bool, tmpl string) (code int, done bool) {
	switch {
	case asJSON && tmpl != "":
		fmt.Fprintln(m.stderr, "Error: -json and -t cannot be combined")
		return exitError, true
	case asJSON:
		b, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			fmt.Fprintf(m.stderr, "Error encoding JSON: %v\n", err)
			return exitError, true
		}
		fmt.Fprintln(m.stdout, string(b))
		return exitOK, true
	case tmpl != "":
		t, err := template.New("format").Parse(tmpl)
		if err != nil {
			fmt.Fprintf(m.stderr, "Error parsing the template -t: %v\n", err)
			return exitError, true
		}
		if err := t.Execute(m.stdout, v); err != nil {
			fmt.Fprintf(m.stderr, "Error executing the template -t: %v\n", err)
			return exitError, true
		}
		return exitOK, true
	}
	return exitOK, false
}

func runNamespaceList(m *Meta, args []string) int {
	fset := m.apiFlagSet("namespace list", "[options]", `
List the namespaces, "default" included.`)
	asJSON := fset.Bool("json", false, "Print the namespaces as JSON.")
	tmpl := fset.String("t", "", "Format the namespaces with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "namespace list takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	nss, _, err := c.Namespaces().List(nil)
	if err != nil {
		return m.fail("listing namespaces", err)
	}
	if code, done := m.printFormatted(nss, *asJSON, *tmpl); done {
		return code
	}
	if len(nss) == 0 {
		fmt.Fprintln(m.stdout, "No namespaces found")
		return exitOK
	}
	rows := make([][]string, 0, len(nss))
	for _, ns := range nss {
		rows = append(rows, []string{ns.Name, ns.Description})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Name", "Description"}, rows))
	return exitOK
}

func runNamespaceStatus(m *Meta, args []string) int {
	fset := m.apiFlagSet("namespace status", "[options] <namespace>", `
Show a namespace: its description, capabilities and metadata.`)
	asJSON := fset.Bool("json", false, "Print the namespace as JSON.")
	tmpl := fset.String("t", "", "Format the namespace with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one namespace name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	name := fset.Arg(0)
	ns, _, err := c.Namespaces().Info(name, nil)
	if api.IsNotFound(err) {
		fmt.Fprintf(m.stderr, "Error: namespace %q not found (drover namespace list shows the namespaces)\n", name)
		return exitError
	}
	if err != nil {
		return m.fail(fmt.Sprintf("reading namespace %q", name), err)
	}
	if code, done := m.printFormatted(ns, *asJSON, *tmpl); done {
		return code
	}
	fmt.Fprint(m.stdout, formatNamespace(ns))
	return exitOK
}

// formatNamespace renders a namespace as `namespace status` shows it.
func formatNamespace(ns *api.Namespace) string {
	pairs := []kv{{"Name", ns.Name}, {"Description", ns.Description}, {"Quota", ns.Quota}}
	if c := ns.Capabilities; c != nil {
		pairs = append(pairs,
			kv{"EnabledDrivers", strings.Join(c.EnabledTaskDrivers, ",")},
			kv{"DisabledDrivers", strings.Join(c.DisabledTaskDrivers, ",")},
			kv{"EnabledNetworkModes", strings.Join(c.EnabledNetworkModes, ",")},
			kv{"DisabledNetworkModes", strings.Join(c.DisabledNetworkModes, ",")})
	}
	out := formatKV(pairs)
	if len(ns.Meta) > 0 {
		var meta []kv
		for _, k := range sortedKeys(ns.Meta) {
			meta = append(meta, kv{k, ns.Meta[k]})
		}
		out += "\nMetadata\n" + formatKV(meta)
	}
	return out
}

func runNamespaceApply(m *Meta, args []string) int {
	fset := m.apiFlagSet("namespace apply", "[options] <namespace | file | ->", `
Create or update a namespace. The argument is a namespace's name, whose
description (and quota) the flags set, keeping what they do not; or a
namespace specification file (HCL, or JSON with -json), "-" for stdin:

  name        = "dev"
  description = "Developers' jobs"
  capabilities {
    enabled_task_drivers  = ["docker", "exec"]
    disabled_network_modes = ["host"]
  }
  meta {
    owner = "team-a"
  }

Resource quotas, node pools and Vault or Consul configurations are Nomad
Enterprise features that drover refuses.`)
	description := fset.String("description", "", "The namespace's description (with a name argument).")
	quota := fset.String("quota", "", "The namespace's resource quota (refused: drover has no quotas).")
	asJSON := fset.Bool("json", false, "The specification is JSON (Nomad's Namespace object), not HCL.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one namespace name, specification file, or - for stdin")
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	arg := fset.Arg(0)
	spec, err := m.readNamespaceSpec(arg, *asJSON)
	if err != nil {
		fmt.Fprintf(m.stderr, "Error reading the namespace specification: %v\n", err)
		return exitError
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	if spec == nil {
		// A name: update what the flags set on the namespace as it is.
		spec = &api.Namespace{Name: arg}
		cur, _, err := c.Namespaces().Info(arg, nil)
		switch {
		case err == nil:
			spec = cur
		case !api.IsNotFound(err):
			return m.fail(fmt.Sprintf("reading namespace %q", arg), err)
		}
	}
	if set["description"] {
		spec.Description = *description
	}
	if set["quota"] {
		spec.Quota = *quota
	}
	if _, err := c.Namespaces().Register(spec, nil); err != nil {
		return m.fail(fmt.Sprintf("applying namespace %q", spec.Name), err)
	}
	fmt.Fprintf(m.stdout, "Successfully applied namespace %q!\n", spec.Name)
	return exitOK
}

// readNamespaceSpec reads the specification arg names: stdin for "-", a
// file that exists; nil (and no error) when arg is a namespace's name.
func (m *Meta) readNamespaceSpec(arg string, asJSON bool) (*api.Namespace, error) {
	var (
		src  []byte
		err  error
		name = arg
	)
	if arg == "-" {
		name = "stdin"
		src, err = readLimited(m.stdin, maxNamespaceSpec)
	} else {
		src, err = m.readFile(arg)
		if errors.Is(err, fs.ErrNotExist) && namespaceName.MatchString(arg) {
			return nil, nil
		}
		if err == nil && len(src) > maxNamespaceSpec {
			err = fmt.Errorf("%s is %d bytes: a namespace specification is at most 1 MiB", arg, len(src))
		}
	}
	if err != nil {
		return nil, err
	}
	if asJSON || strings.HasSuffix(arg, ".json") {
		var ns api.Namespace
		if err := json.Unmarshal(src, &ns); err != nil {
			return nil, fmt.Errorf("%s is not a JSON namespace: %v", name, err)
		}
		return &ns, nil
	}
	return parseNamespaceSpecHCL(name, src)
}

// namespaceSpecSchema is the HCL form of a namespace specification, as
// Nomad's.
var namespaceSpecSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "name"}, {Name: "description"}, {Name: "quota"}},
	Blocks: []hcl.BlockHeaderSchema{{Type: "capabilities"}, {Type: "meta"}, {Type: "node_pool_config"},
		{Type: "vault"}, {Type: "consul"}},
}

// parseNamespaceSpecHCL parses an HCL namespace specification.
func parseNamespaceSpecHCL(name string, src []byte) (*api.Namespace, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	content, diags := f.Body.Content(namespaceSpecSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	ns := &api.Namespace{}
	for attr, dst := range map[string]*string{"name": &ns.Name, "description": &ns.Description, "quota": &ns.Quota} {
		if a := content.Attributes[attr]; a != nil {
			s, err := hclString(a)
			if err != nil {
				return nil, err
			}
			*dst = s
		}
	}
	if ns.Name == "" {
		return nil, fmt.Errorf("%s: the namespace's name is missing: set name = \"...\"", name)
	}
	for _, b := range content.Blocks {
		attrs, diags := b.Body.JustAttributes()
		if diags.HasErrors() {
			return nil, diags
		}
		if b.Type == "meta" {
			ns.Meta = map[string]string{}
			for k, a := range attrs {
				s, err := hclString(a)
				if err != nil {
					return nil, err
				}
				ns.Meta[k] = s
			}
			continue
		}
		keys := []string{"default", "allowed", "denied"}
		if b.Type == "capabilities" {
			keys = []string{"enabled_task_drivers", "disabled_task_drivers", "enabled_network_modes", "disabled_network_modes"}
		}
		for k, a := range attrs {
			if !slices.Contains(keys, k) {
				return nil, fmt.Errorf("%s: %s is not an argument of a %s block: use %s", a.Range, k, b.Type, strings.Join(keys, ", "))
			}
		}
		lists := map[string][]string{}
		var def string
		for k, a := range attrs {
			if k == "default" && b.Type != "capabilities" {
				s, err := hclString(a)
				if err != nil {
					return nil, err
				}
				def = s
				continue
			}
			l, err := hclStringList(a)
			if err != nil {
				return nil, err
			}
			lists[k] = l
		}
		switch b.Type {
		case "capabilities":
			ns.Capabilities = &api.NamespaceCapabilities{
				EnabledTaskDrivers: lists["enabled_task_drivers"], DisabledTaskDrivers: lists["disabled_task_drivers"],
				EnabledNetworkModes: lists["enabled_network_modes"], DisabledNetworkModes: lists["disabled_network_modes"],
			}
		case "node_pool_config":
			ns.NodePoolConfiguration = &api.NamespaceNodePoolConfiguration{Default: def, Allowed: lists["allowed"], Denied: lists["denied"]}
		case "vault":
			ns.VaultConfiguration = &api.NamespaceClusterConfiguration{Default: def, Allowed: lists["allowed"], Denied: lists["denied"]}
		case "consul":
			ns.ConsulConfiguration = &api.NamespaceClusterConfiguration{Default: def, Allowed: lists["allowed"], Denied: lists["denied"]}
		}
	}
	return ns, nil
}

// hclStringList evaluates an attribute that must be a list of strings.
func hclStringList(a *hcl.Attribute) ([]string, error) {
	val, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return nil, diags
	}
	bad := fmt.Errorf("%s: %s must be a list of strings", a.Range, a.Name)
	if val.IsNull() || !(val.Type().IsListType() || val.Type().IsTupleType()) {
		return nil, bad
	}
	var out []string
	for it := val.ElementIterator(); it.Next(); {
		_, v := it.Element()
		if v.IsNull() || !v.Type().Equals(cty.String) {
			return nil, bad
		}
		out = append(out, v.AsString())
	}
	return out, nil
}

func runNamespaceDelete(m *Meta, args []string) int {
	fset := m.apiFlagSet("namespace delete", "[options] <namespace>", `
Delete a namespace. The servers refuse to delete "default", and a
namespace that still has jobs that are not dead or variables.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one namespace name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	name := fset.Arg(0)
	if _, err := c.Namespaces().Delete(name, nil); err != nil {
		return m.fail(fmt.Sprintf("deleting namespace %q", name), err)
	}
	fmt.Fprintf(m.stdout, "Successfully deleted namespace %q!\n", name)
	return exitOK
}
