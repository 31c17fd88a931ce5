package command

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/drover-io/drover/api"
)

// maxVarInput bounds what `var put` reads from a file or stdin: far above
// the servers' limit on a variable (64 KiB), so that they say what is
// wrong with one too large.
const maxVarInput = 1 << 20

func runVarPut(m *Meta, args []string) int {
	fset := m.apiFlagSet("var put", "[options] <path> [@<spec file>|-] [<key>=<value>]...", `
Create or update the variable at <path>. Its items are given as
<key>=<value> arguments: a value "@<file>" is the file's content, "-" is
read from stdin. A variable specification (JSON or HCL, with path,
namespace and items) may be given as @<file>, or "-" for stdin with -in;
arguments override its items.

Without -check-index the variable is written whatever its current state;
with it, only if its modify index on the server is the one given (0: only
if it does not exist). A specification holding a ModifyIndex is a
check-and-set on it unless -force is given.

Items are encrypted by the servers; a variable is at most 64 KiB.`)
	checkIndex := fset.Uint64("check-index", 0, "Write only if the variable's modify index is this one (0: only if it does not exist).")
	force := fset.Bool("force", false, "Write whatever the variable's modify index, even if the specification holds one.")
	in := fset.String("in", "json", `The format of a specification read from stdin: "json" or "hcl".`)
	out := fset.String("out", "none", `What to print on success: "none" (a message), "json" or "table".`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() < 1 {
		return m.usageError(fset, "give the variable's path, and its items as key=value")
	}
	casSet := false
	fset.Visit(func(f *flag.Flag) {
		if f.Name == "check-index" {
			casSet = true
		}
	})
	if casSet && *force {
		return m.usageError(fset, "-check-index and -force cannot be combined")
	}
	v := &api.Variable{}
	rest := fset.Args()
	if strings.HasPrefix(rest[0], "@") || rest[0] == "-" {
		// The specification names the path.
	} else {
		v.Path, rest = rest[0], rest[1:]
	}
	specIndex := false
	if len(rest) > 0 && (strings.HasPrefix(rest[0], "@") || rest[0] == "-") && !strings.Contains(rest[0], "=") {
		spec, err := m.readVarSpec(rest[0], *in)
		if err != nil {
			fmt.Fprintf(m.stderr, "Error reading the variable specification: %v\n", err)
			return exitError
		}
		if v.Path == "" {
			v.Path = spec.Path
		}
		v.Namespace, v.Items = spec.Namespace, spec.Items
		if spec.ModifyIndex != 0 && !casSet && !*force {
			*checkIndex, casSet, specIndex = spec.ModifyIndex, true, true
		}
		rest = rest[1:]
	}
	if v.Path == "" {
		return m.usageError(fset, "the variable's path is missing: give it as the first argument or in the specification")
	}
	if v.Items == nil {
		v.Items = map[string]string{}
	}
	for _, arg := range rest {
		key, value, ok := strings.Cut(arg, "=")
		if !ok || key == "" {
			return m.usageError(fset, fmt.Sprintf("item %q is not <key>=<value>", arg))
		}
		val, err := m.itemValue(value)
		if err != nil {
			fmt.Fprintf(m.stderr, "Error reading the value of item %q: %v\n", key, err)
			return exitError
		}
		v.Items[key] = val
	}
	if len(v.Items) == 0 {
		return m.usageError(fset, "the variable has no items: give at least one <key>=<value>")
	}
	if *out != "none" && *out != "json" && *out != "table" {
		return m.usageError(fset, fmt.Sprintf("-out %q is not a format: use none, json or table", *out))
	}
	if m.namespace != "" {
		v.Namespace = ""
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	written, _, err := c.Variables().Put(v, casSet, *checkIndex, nil)
	var conflict *api.CASConflictError
	if errors.As(err, &conflict) {
		what := "its modify index is " + strconv.FormatUint(conflict.Conflict.ModifyIndex, 10)
		if conflict.Conflict.ModifyIndex == 0 {
			what = "it does not exist"
		} else if *checkIndex == 0 {
			what = "it exists"
		}
		hint := "read it with `drover var get` and write again with its -check-index, or use -force"
		if specIndex {
			hint = "the specification's ModifyIndex is stale: " + hint
		}
		fmt.Fprintf(m.stderr, "Error writing variable %q: check-and-set on modify index %d failed: %s; %s\n", v.Path, *checkIndex, what, hint)
		return exitError
	}
	if err != nil {
		return m.fail(fmt.Sprintf("writing variable %q", v.Path), err)
	}
	return m.printVar(written, *out, fmt.Sprintf("Wrote variable %q with modify index %d", written.Path, written.ModifyIndex))
}

// readVarSpec reads a variable specification from @file or "-" (stdin,
// in format in).
func (m *Meta) readVarSpec(src, in string) (*api.Variable, error) {
	var (
		b      []byte
		err    error
		format = in
		name   = "stdin"
	)
	if src == "-" {
		b, err = readLimited(m.stdin, maxVarInput)
	} else {
		name = strings.TrimPrefix(src, "@")
		b, err = m.readFile(name)
		format = "json"
		if strings.HasSuffix(name, ".hcl") {
			format = "hcl"
		}
	}
	if err != nil {
		return nil, err
	}
	switch format {
	case "json":
		var v api.Variable
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s is not a JSON variable: %v", name, err)
		}
		return &v, nil
	case "hcl":
		return parseVarSpecHCL(name, b)
	}
	return nil, fmt.Errorf("-in %q is not a format: use json or hcl", in)
}

// parseVarSpecHCL parses an HCL variable specification: path, namespace
// and an items block of string arguments.
func parseVarSpecHCL(name string, src []byte) (*api.Variable, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	content, diags := f.Body.Content(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: "namespace"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "items"}},
	})
	if diags.HasErrors() {
		return nil, diags
	}
	v := &api.Variable{Items: map[string]string{}}
	for attr, dst := range map[string]*string{"path": &v.Path, "namespace": &v.Namespace} {
		if a := content.Attributes[attr]; a != nil {
			s, err := hclString(a)
			if err != nil {
				return nil, err
			}
			*dst = s
		}
	}
	for _, b := range content.Blocks {
		attrs, diags := b.Body.JustAttributes()
		if diags.HasErrors() {
			return nil, diags
		}
		for k, a := range attrs {
			s, err := hclString(a)
			if err != nil {
				return nil, err
			}
			v.Items[k] = s
		}
	}
	return v, nil
}

func hclString(a *hcl.Attribute) (string, error) {
	val, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return "", diags
	}
	if val.IsNull() || !val.Type().Equals(cty.String) {
		return "", fmt.Errorf("%s: %s must be a string", a.Range, a.Name)
	}
	return val.AsString(), nil
}

// itemValue is an item's value as given: "@file" reads the file, "-"
// stdin; anything else is the value itself.
func (m *Meta) itemValue(v string) (string, error) {
	switch {
	case v == "-":
		b, err := readLimited(m.stdin, maxVarInput)
		return strings.TrimSuffix(string(b), "\n"), err
	case strings.HasPrefix(v, "@"):
		b, err := m.readFile(v[1:])
		if err != nil {
			return "", err
		}
		if len(b) > maxVarInput {
			return "", fmt.Errorf("%s is %d bytes: a variable is at most 64 KiB", v[1:], len(b))
		}
		return string(b), nil
	}
	return v, nil
}

func readLimited(r io.Reader, limit int64) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no stdin")
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("input is larger than %d bytes", limit)
	}
	return b, nil
}

// printVar prints a variable as out says: a message, JSON or a table.
func (m *Meta) printVar(v *api.Variable, out, message string) int {
	switch out {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			fmt.Fprintf(m.stderr, "Error encoding the variable: %v\n", err)
			return exitError
		}
		fmt.Fprintln(m.stdout, string(b))
	case "table":
		fmt.Fprint(m.stdout, formatVariable(v))
	default:
		fmt.Fprintln(m.stdout, message)
	}
	return exitOK
}

// formatVariable renders a variable's metadata and items.
func formatVariable(v *api.Variable) string {
	meta := []kv{
		{"Namespace", v.Namespace},
		{"Path", v.Path},
		{"Create Time", formatUnixNano(v.CreateTime)},
	}
	if v.ModifyTime != v.CreateTime {
		meta = append(meta, kv{"Modify Time", formatUnixNano(v.ModifyTime)})
	}
	meta = append(meta, kv{"Check Index", strconv.FormatUint(v.ModifyIndex, 10)})
	if v.Lock != nil {
		meta = append(meta, kv{"Lock ID", v.Lock.ID}, kv{"Lock TTL", v.Lock.TTL})
	}
	var items []kv
	for _, k := range sortedKeys(v.Items) {
		items = append(items, kv{k, v.Items[k]})
	}
	return formatKV(meta) + "\nItems\n" + formatKV(items)
}

func runVarGet(m *Meta, args []string) int {
	fset := m.apiFlagSet("var get", "[options] <path>", `
Show the variable at <path>: its metadata and items.`)
	item := fset.String("item", "", "Print only the value of this item.")
	out := fset.String("out", "table", `The output format: "table" or "json".`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the variable's path")
	}
	if *out != "json" && *out != "table" {
		return m.usageError(fset, fmt.Sprintf("-out %q is not a format: use json or table", *out))
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	path := fset.Arg(0)
	v, _, err := c.Variables().Read(path, nil)
	if errors.Is(err, api.ErrVariableNotFound) {
		fmt.Fprintf(m.stderr, "Error: variable %q not found: `drover var list` shows the paths there are\n", path)
		return exitError
	}
	if err != nil {
		return m.fail(fmt.Sprintf("reading variable %q", path), err)
	}
	if *item != "" {
		val, ok := v.Items[*item]
		if !ok {
			keys := make([]string, 0, len(v.Items))
			for k := range v.Items {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(m.stderr, "Error: variable %q has no item %q; its items: %s\n", path, *item, strings.Join(keys, ", "))
			return exitError
		}
		fmt.Fprintln(m.stdout, val)
		return exitOK
	}
	return m.printVar(v, *out, "")
}

func runVarList(m *Meta, args []string) int {
	fset := m.apiFlagSet("var list", "[options] [<prefix>]", `
List the variables (their paths, not their items) whose path starts with
<prefix>; -namespace=* lists every namespace.`)
	out := fset.String("out", "table", `The output format: "table" or "json".`)
	perPage := fset.Int("per-page", 0, "Show at most this many variables, and the token of the next page.")
	pageToken := fset.String("page-token", "", "Start at this page token (from an earlier -per-page listing).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() > 1 {
		return m.usageError(fset, "give at most one prefix")
	}
	if *out != "json" && *out != "table" {
		return m.usageError(fset, fmt.Sprintf("-out %q is not a format: use json or table", *out))
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	vars, next, _, err := c.Variables().List(&api.QueryOptions{Prefix: fset.Arg(0)}, *perPage, *pageToken)
	if err != nil {
		return m.fail("listing variables", err)
	}
	if *out == "json" {
		b, err := json.MarshalIndent(vars, "", "  ")
		if err != nil {
			fmt.Fprintf(m.stderr, "Error encoding the variables: %v\n", err)
			return exitError
		}
		fmt.Fprintln(m.stdout, string(b))
		return exitOK
	}
	if len(vars) == 0 {
		fmt.Fprintln(m.stdout, "No variables found")
		return exitOK
	}
	rows := make([][]string, 0, len(vars))
	for _, v := range vars {
		rows = append(rows, []string{v.Namespace, v.Path, formatUnixNano(v.ModifyTime)})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Namespace", "Path", "Last Updated"}, rows))
	if next != "" {
		fmt.Fprintf(m.stdout, "\nNext page token: %s\n", next)
	}
	return exitOK
}

func runVarPurge(m *Meta, args []string) int {
	fset := m.apiFlagSet("var purge", "[options] <path>", `
Delete the variable at <path>. With -check-index, only if its modify
index is the one given.`)
	checkIndex := fset.Uint64("check-index", 0, "Delete only if the variable's modify index is this one.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the variable's path")
	}
	cas := false
	fset.Visit(func(f *flag.Flag) { cas = cas || f.Name == "check-index" })
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	path := fset.Arg(0)
	_, err := c.Variables().Delete(path, cas, *checkIndex, nil)
	var conflict *api.CASConflictError
	if errors.As(err, &conflict) {
		fmt.Fprintf(m.stderr, "Error purging variable %q: check-and-set on modify index %d failed: its modify index is %d; read it with `drover var get` and try again\n",
			path, *checkIndex, conflict.Conflict.ModifyIndex)
		return exitError
	}
	if err != nil {
		return m.fail(fmt.Sprintf("purging variable %q", path), err)
	}
	fmt.Fprintf(m.stdout, "Purged variable %q\n", path)
	return exitOK
}
