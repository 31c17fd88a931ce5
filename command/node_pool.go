package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/drover-io/drover/api"
)

// maxNodePoolSpec bounds what `node pool apply` reads from a file or
// stdin.
const maxNodePoolSpec = 1 << 20

func runNodePoolList(m *Meta, args []string) int {
	fset := m.apiFlagSet("node pool list", "[options]", `
List the node pools: the built-in "all" and "default", those created with
drover node pool apply, and those a client's node_pool names.`)
	asJSON := fset.Bool("json", false, "Print the node pools as JSON.")
	tmpl := fset.String("t", "", "Format the node pools with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "node pool list takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	pools, _, err := c.NodePools().List(nil)
	if err != nil {
		return m.fail("listing node pools", err)
	}
	if code, done := m.printFormatted(pools, *asJSON, *tmpl); done {
		return code
	}
	rows := make([][]string, 0, len(pools))
	for _, p := range pools {
		rows = append(rows, []string{p.Name, p.Description})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Name", "Description"}, rows))
	return exitOK
}

func runNodePoolInfo(m *Meta, args []string) int {
	fset := m.apiFlagSet("node pool info", "[options] <pool>", `
Show a node pool: its description, metadata and nodes.`)
	asJSON := fset.Bool("json", false, "Print the node pool as JSON.")
	tmpl := fset.String("t", "", "Format the node pool with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one node pool name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	name := fset.Arg(0)
	p, _, err := c.NodePools().Info(name, nil)
	if api.IsNotFound(err) {
		fmt.Fprintf(m.stderr, "Error: node pool %q not found (drover node pool list shows the pools)\n", name)
		return exitError
	}
	if err != nil {
		return m.fail(fmt.Sprintf("reading node pool %q", name), err)
	}
	if code, done := m.printFormatted(p, *asJSON, *tmpl); done {
		return code
	}
	nodes, _, err := c.NodePools().ListNodes(name, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("listing the nodes of pool %q", name), err)
	}
	fmt.Fprint(m.stdout, formatKV([]kv{{"Name", p.Name}, {"Description", p.Description}}))
	if len(p.Meta) > 0 {
		var meta []kv
		for _, k := range sortedKeys(p.Meta) {
			meta = append(meta, kv{k, p.Meta[k]})
		}
		fmt.Fprint(m.stdout, "\nMetadata\n"+formatKV(meta))
	}
	fmt.Fprintln(m.stdout, "\nNodes")
	if len(nodes) == 0 {
		fmt.Fprintln(m.stdout, "No nodes in this pool")
		return exitOK
	}
	rows := make([][]string, 0, len(nodes))
	for _, n := range nodes {
		rows = append(rows, []string{shortID(n.ID, false), n.Name, n.Datacenter, orNone(n.NodeClass), n.Status})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"ID", "Name", "DC", "Class", "Status"}, rows))
	return exitOK
}

func runNodePoolApply(m *Meta, args []string) int {
	fset := m.apiFlagSet("node pool apply", "[options] <file | ->", `
Create or update a node pool from a specification file (HCL, or JSON with
-json or a .json name), "-" for stdin:

  node_pool "gpu" {
    description = "Nodes with GPUs"
    meta {
      owner = "ml-team"
    }
  }

The built-in pools "all" and "default" cannot be changed.`)
	asJSON := fset.Bool("json", false, "The specification is JSON (Nomad's NodePool object), not HCL.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one specification file, or - for stdin")
	}
	arg := fset.Arg(0)
	var (
		src  []byte
		err  error
		name = arg
	)
	if arg == "-" {
		name = "stdin"
		src, err = readLimited(m.stdin, maxNodePoolSpec)
	} else if src, err = m.readFile(arg); err == nil && len(src) > maxNodePoolSpec {
		err = fmt.Errorf("%s is %d bytes: a node pool specification is at most 1 MiB", arg, len(src))
	}
	if err == nil {
		var p *api.NodePool
		if *asJSON || strings.HasSuffix(arg, ".json") {
			p = &api.NodePool{}
			if jerr := json.Unmarshal(src, p); jerr != nil {
				err = fmt.Errorf("%s is not a JSON node pool: %v", name, jerr)
			}
		} else {
			p, err = parseNodePoolSpec(name, src)
		}
		if err == nil {
			return m.applyNodePool(p)
		}
	}
	fmt.Fprintf(m.stderr, "Error reading the node pool specification: %v\n", err)
	return exitError
}

func (m *Meta) applyNodePool(p *api.NodePool) int {
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	if _, err := c.NodePools().Register(p, nil); err != nil {
		return m.fail(fmt.Sprintf("applying node pool %q", p.Name), err)
	}
	fmt.Fprintf(m.stdout, "Successfully applied node pool %q!\n", p.Name)
	return exitOK
}

// nodePoolFileSchema is the HCL form of a node pool specification, as
// Nomad's: one labelled node_pool block.
var (
	nodePoolFileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "node_pool", LabelNames: []string{"name"}}}}
	nodePoolSchema     = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "description"}, {Name: "node_identity_ttl"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "meta"}, {Type: "scheduler_config"}},
	}
)

// parseNodePoolSpec parses an HCL node pool specification.
func parseNodePoolSpec(name string, src []byte) (*api.NodePool, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	content, diags := f.Body.Content(nodePoolFileSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	if len(content.Blocks) != 1 {
		return nil, fmt.Errorf("%s: a node pool specification holds exactly one node_pool \"<name>\" block, not %d", name, len(content.Blocks))
	}
	b := content.Blocks[0]
	body, diags := b.Body.Content(nodePoolSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	p := &api.NodePool{Name: b.Labels[0]}
	if a := body.Attributes["description"]; a != nil {
		s, err := hclString(a)
		if err != nil {
			return nil, err
		}
		p.Description = s
	}
	if a := body.Attributes["node_identity_ttl"]; a != nil {
		s, err := hclString(a)
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s: node_identity_ttl %q is not a duration such as \"24h\"", a.Range, s)
		}
		p.NodeIdentityTTL = d
	}
	for _, blk := range body.Blocks {
		if blk.Type == "scheduler_config" {
			return nil, fmt.Errorf("%s: scheduler_config is a Nomad Enterprise feature that drover does not support: remove the block", blk.DefRange)
		}
		attrs, diags := blk.Body.JustAttributes()
		if diags.HasErrors() {
			return nil, diags
		}
		p.Meta = map[string]string{}
		for k, a := range attrs {
			s, err := hclString(a)
			if err != nil {
				return nil, err
			}
			p.Meta[k] = s
		}
	}
	return p, nil
}

func runNodePoolDelete(m *Meta, args []string) int {
	fset := m.apiFlagSet("node pool delete", "[options] <pool>", `
Delete a node pool. The servers refuse the built-in pools, and a pool
that still has nodes or jobs that are not dead.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one node pool name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	name := fset.Arg(0)
	if _, err := c.NodePools().Delete(name, nil); err != nil {
		return m.fail(fmt.Sprintf("deleting node pool %q", name), err)
	}
	fmt.Fprintf(m.stdout, "Successfully deleted node pool %q!\n", name)
	return exitOK
}
