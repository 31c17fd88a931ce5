package command

import (
	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
)

func runNodeMetaApply(m *Meta, args []string) int {
	fset := m.apiFlagSet("node meta apply", "[options] key=value ...", `
Change a node's dynamic metadata at run time, without restarting its agent.
Each key=value sets a key (an empty value sets it to ""); -unset removes
keys. A dynamic value replaces the value of the same key in the agent's
client { meta } block; an unset key is removed from the node's metadata,
a static one too, until it is set again. The node's own agent stores the
change (it survives a restart of the agent) and sends the node to the
servers at once: constraints on ${meta.<key>} see it for new placements.

Keys are identifiers separated by "." (rack, connect.log_level). The node is
the agent's own unless -node-id names one (an ID or a unique ID prefix); the
request goes to that node's agent through the agent the CLI talks to. Prints
nothing on success.`)
	nodeID := fset.String("node-id", "", "The node to change (ID or unique prefix); default the agent's own node.")
	unset := fset.String("unset", "", "Comma-separated keys to remove (k1,k2).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	changes := map[string]*string{}
	for _, arg := range fset.Args() {
		k, v, ok := strings.Cut(arg, "=")
		if !ok || k == "" {
			return m.usageError(fset, fmt.Sprintf("%q is not key=value (remove keys with -unset key)", arg))
		}
		changes[k] = &v
	}
	if *unset != "" {
		for _, k := range strings.Split(*unset, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				return m.usageError(fset, fmt.Sprintf("-unset %q names an empty key", *unset))
			}
			if _, ok := changes[k]; ok {
				return m.usageError(fset, fmt.Sprintf("key %q is both set and unset", k))
			}
			changes[k] = nil
		}
	}
	if len(changes) == 0 {
		return m.usageError(fset, "give at least one key=value or -unset key")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	id, code := m.metaNodeArg(c, *nodeID)
	if code != exitOK {
		return code
	}
	if _, err := c.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{NodeID: id, Meta: changes}, nil); err != nil {
		return m.fail("applying node metadata", err)
	}
	return exitOK
}

func runNodeMetaRead(m *Meta, args []string) int {
	fset := m.apiFlagSet("node meta read", "[options]", `
Show a node's metadata as its own agent holds it: all of it (what
constraints and ${meta.<key>} see), the dynamic part (set with drover node
meta apply; an unset key shows as <unset>) and the static part (the agent's
client { meta } block, with the client's default keys). The node is the
agent's own unless -node-id names one (an ID or a unique ID prefix).
drover node status -verbose shows the metadata the servers have.`)
	nodeID := fset.String("node-id", "", "The node to read (ID or unique prefix); default the agent's own node.")
	asJSON := fset.Bool("json", false, "Print the metadata as JSON.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments: name the node with -node-id")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	id, code := m.metaNodeArg(c, *nodeID)
	if code != exitOK {
		return code
	}
	resp, err := c.Nodes().Meta().Read(id, nil)
	if err != nil {
		return m.fail("reading node metadata", err)
	}
	if *asJSON {
		return m.printJSON("node metadata", resp)
	}
	fmt.Fprint(m.stdout, formatNodeMeta(resp))
	return exitOK
}

// metaNodeArg resolves -node-id: "" (the agent's own node) stays "".
func (m *Meta) metaNodeArg(c *api.Client, prefix string) (string, int) {
	if prefix == "" {
		return "", exitOK
	}
	id, code := m.resolveNode(c, prefix, true)
	if id == "" {
		return "", code
	}
	return id, exitOK
}

// formatNodeMeta renders node meta read: the merged, dynamic and static
// metadata, each with its "=" signs aligned.
func formatNodeMeta(r *api.NodeMetaResponse) string {
	section := func(title string, pairs []kv) string {
		if len(pairs) == 0 {
			return title + "\n<none>\n"
		}
		return title + "\n" + formatKV(pairs)
	}
	var all, dynamic, static []kv
	for _, k := range sortedKeys(r.Meta) {
		all = append(all, kv{k, r.Meta[k]})
	}
	for _, k := range sortedKeys(r.Dynamic) {
		v := "<unset>"
		if p := r.Dynamic[k]; p != nil {
			v = *p
		}
		dynamic = append(dynamic, kv{k, v})
	}
	for _, k := range sortedKeys(r.Static) {
		static = append(static, kv{k, r.Static[k]})
	}
	return section("All Meta", all) + "\n" + section("Dynamic Meta", dynamic) + "\n" + section("Static Meta", static)
}
