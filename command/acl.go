package command

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

var _ flag.Value = (*stringList)(nil) // tls.go declares it

func runACLBootstrap(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl bootstrap", "[options] [<path>]", `
Bootstrap the ACL system: create the first management token, once. The
optional file (or "-" for stdin) holds the secret ID to give it (a UUID).
To bootstrap again after the token is lost, write the reset index the
error names into <data_dir>/server/acl-bootstrap-reset on the leader.`)
	asJSON := fset.Bool("json", false, "Print the token as JSON.")
	tmpl := fset.String("t", "", "Format the token with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() > 1 {
		return m.usageError(fset, "give at most one file holding the bootstrap secret")
	}
	var secret string
	if fset.NArg() == 1 {
		b, err := m.readArg(fset.Arg(0))
		if err != nil {
			fmt.Fprintf(m.stderr, "Error reading the bootstrap secret: %v\n", err)
			return exitError
		}
		secret = strings.TrimSpace(string(b))
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	tok, _, err := c.ACL().Bootstrap(secret, nil)
	if err != nil {
		return m.fail("bootstrapping the ACL system", err)
	}
	return m.printToken(tok, *asJSON, *tmpl)
}

// readArg reads a file, or stdin for "-".
func (m *Meta) readArg(path string) ([]byte, error) {
	if path == "-" {
		if m.stdin == nil {
			return nil, fmt.Errorf("no standard input")
		}
		return io.ReadAll(io.LimitReader(m.stdin, maxNamespaceSpec))
	}
	return m.readFile(path)
}

func (m *Meta) printToken(tok *api.ACLToken, asJSON bool, tmpl string) int {
	if code, done := m.printFormatted(tok, asJSON, tmpl); done {
		return code
	}
	fmt.Fprint(m.stdout, formatToken(tok))
	return exitOK
}

// formatToken renders a token as Nomad's CLI does.
func formatToken(t *api.ACLToken) string {
	expiry := "<none>"
	if t.ExpirationTime != nil {
		expiry = t.ExpirationTime.Format(time.RFC3339)
	}
	policies := "n/a"
	if t.Type != "management" {
		policies = fmt.Sprintf("%v", t.Policies)
	}
	out := formatKV([]kv{
		{"Accessor ID", t.AccessorID}, {"Secret ID", t.SecretID}, {"Name", t.Name}, {"Type", t.Type},
		{"Global", fmt.Sprint(t.Global)}, {"Create Time", t.CreateTime.Format(time.RFC3339)},
		{"Expiry Time", expiry}, {"Create Index", fmt.Sprint(t.CreateIndex)}, {"Modify Index", fmt.Sprint(t.ModifyIndex)},
		{"Policies", policies},
	})
	out += "\nRoles\n"
	if len(t.Roles) == 0 {
		return out + "<none>\n"
	}
	rows := make([][]string, 0, len(t.Roles))
	for _, r := range t.Roles {
		rows = append(rows, []string{r.ID, r.Name})
	}
	return out + formatTable([]string{"ID", "Name"}, rows)
}

func runACLPolicyApply(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl policy apply", "[options] <name> <path>", `
Create or update an ACL policy from a rules file (or "-" for stdin), in
Nomad's policy language (docs/acl.md).`)
	description := fset.String("description", "", "The policy's description.")
	job := fset.String("job", "", "Attach the policy to a job's workload identity (refused: not supported).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 2 {
		return m.usageError(fset, "give the policy's name and its rules file")
	}
	if *job != "" {
		fmt.Fprintln(m.stderr, "Error: -job: policies attached to workload identities are not supported by drover")
		return exitError
	}
	name := fset.Arg(0)
	rules, err := m.readArg(fset.Arg(1))
	if err != nil {
		fmt.Fprintf(m.stderr, "Error reading the policy rules: %v\n", err)
		return exitError
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	if _, err := c.ACL().UpsertPolicy(&api.ACLPolicy{Name: name, Description: *description, Rules: string(rules)}, nil); err != nil {
		return m.fail(fmt.Sprintf("writing ACL policy %q", name), err)
	}
	fmt.Fprintf(m.stdout, "Successfully wrote %q ACL policy!\n", name)
	return exitOK
}

func runACLPolicyList(m *Meta, args []string) int {
	return runPolicyList(m, args, policyListing{
		name: "acl policy list", help: "List the ACL policies.", doing: "listing ACL policies",
		empty: "No policies found",
		fetch: func(c *api.Client) ([]*api.ACLPolicyListStub, error) {
			ps, _, err := c.ACL().Policies(nil)
			return ps, err
		},
	})
}

// policyListing is what differs between the commands that print a list of
// policies: `acl policy list` and `acl policy self`.
type policyListing struct {
	name, help, doing, empty string
	fetch                    func(*api.Client) ([]*api.ACLPolicyListStub, error)
}

// runPolicyList runs a command that prints a list of policies as a table,
// JSON or a template.
func runPolicyList(m *Meta, args []string, l policyListing) int {
	fset := m.apiFlagSet(l.name, "[options]", "\n"+l.help)
	asJSON := fset.Bool("json", false, "Print the policies as JSON.")
	tmpl := fset.String("t", "", "Format the policies with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, l.name+" takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	ps, err := l.fetch(c)
	if err != nil {
		return m.fail(l.doing, err)
	}
	if code, done := m.printFormatted(ps, *asJSON, *tmpl); done {
		return code
	}
	if len(ps) == 0 {
		fmt.Fprintln(m.stdout, l.empty)
		return exitOK
	}
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, []string{p.Name, p.Description})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Name", "Description"}, rows))
	return exitOK
}

func runACLPolicyInfo(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl policy info", "[options] <name>", `
Show an ACL policy and its rules.`)
	asJSON := fset.Bool("json", false, "Print the policy as JSON.")
	tmpl := fset.String("t", "", "Format the policy with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one policy name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	p, _, err := c.ACL().Policy(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL policy %q", fset.Arg(0)), err)
	}
	if code, done := m.printFormatted(p, *asJSON, *tmpl); done {
		return code
	}
	fmt.Fprint(m.stdout, formatKV([]kv{{"Name", p.Name}, {"Description", p.Description},
		{"CreateIndex", fmt.Sprint(p.CreateIndex)}, {"ModifyIndex", fmt.Sprint(p.ModifyIndex)}}))
	fmt.Fprintf(m.stdout, "\nRules\n\n%s\n", strings.TrimRight(p.Rules, "\n"))
	return exitOK
}

func runACLPolicyDelete(m *Meta, args []string) int {
	return runACLDelete(m, args, aclDelete{
		cmd: "acl policy delete", arg: "<name>", help: "Delete an ACL policy.", what: "policy name", object: "ACL policy",
		del:  func(a *api.ACL, id string) error { _, err := a.DeletePolicy(id, nil); return err },
		done: "Successfully deleted %q ACL policy!\n",
	})
}

// aclDelete describes one of the acl delete commands.
type aclDelete struct {
	cmd, arg, help string
	// what names the argument in a usage error; object in a failure.
	what, object string
	del          func(a *api.ACL, id string) error
	// done is printed with the argument on success.
	done string
}

// runACLDelete runs an acl delete command: one argument, one DELETE.
func runACLDelete(m *Meta, args []string, d aclDelete) int {
	fset := m.apiFlagSet(d.cmd, "[options] "+d.arg, "\n"+d.help)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one "+d.what)
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	if err := d.del(c.ACL(), fset.Arg(0)); err != nil {
		return m.fail(fmt.Sprintf("deleting %s %q", d.object, fset.Arg(0)), err)
	}
	fmt.Fprintf(m.stdout, d.done, fset.Arg(0))
	return exitOK
}

// tokenFlags are the flags of token create and update.
type tokenFlags struct {
	name, typ, ttl      *string
	global              *bool
	policies, roleNames stringList
	roleIDs             stringList
	asJSON              *bool
	tmpl                *string
}

func addTokenFlags(fset *flagSet, defType string) *tokenFlags {
	f := &tokenFlags{
		name:   fset.String("name", "", "The token's name."),
		typ:    fset.String("type", defType, `The token's type: "client" or "management".`),
		ttl:    fset.String("ttl", "", "How long the token lives (\"1h\"; between 1m and 24h): create only."),
		global: fset.Bool("global", false, "A global token (drover runs one region: accepted and kept)."),
		asJSON: fset.Bool("json", false, "Print the token as JSON."),
		tmpl:   fset.String("t", "", "Format the token with this Go template."),
	}
	fset.Var(&f.policies, "policy", "A policy of the token; repeat it for each.")
	fset.Var(&f.roleNames, "role-name", "A role of the token, by name; repeat it for each.")
	fset.Var(&f.roleIDs, "role-id", "A role of the token, by ID; repeat it for each.")
	return f
}

func (f *tokenFlags) roles() []*api.ACLTokenRoleLink {
	var out []*api.ACLTokenRoleLink
	for _, n := range f.roleNames {
		out = append(out, &api.ACLTokenRoleLink{Name: n})
	}
	for _, id := range f.roleIDs {
		out = append(out, &api.ACLTokenRoleLink{ID: id})
	}
	return out
}

func runACLTokenCreate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl token create", "[options]", `
Create an ACL token: a client token gets its policies and roles; a
management token is granted everything.`)
	f := addTokenFlags(fset, "client")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl token create takes no arguments")
	}
	tok := &api.ACLToken{Name: *f.name, Type: *f.typ, Policies: f.policies, Roles: f.roles(), Global: *f.global}
	if *f.ttl != "" {
		d, err := time.ParseDuration(*f.ttl)
		if err != nil {
			return m.usageError(fset, fmt.Sprintf("-ttl=%q is not a duration (e.g. 1h)", *f.ttl))
		}
		tok.ExpirationTTL = d
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	out, _, err := c.ACL().CreateToken(tok, nil)
	if err != nil {
		return m.fail("creating the ACL token", err)
	}
	return m.printToken(out, *f.asJSON, *f.tmpl)
}

func runACLTokenUpdate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl token update", "[options] <accessor_id>", `
Update an ACL token: the flags given replace what the token has.`)
	f := addTokenFlags(fset, "")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one token accessor ID")
	}
	set := map[string]bool{}
	fset.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	tok, _, err := c.ACL().Token(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL token %q", fset.Arg(0)), err)
	}
	if set["name"] {
		tok.Name = *f.name
	}
	if set["type"] {
		tok.Type = *f.typ
	}
	if set["global"] {
		tok.Global = *f.global
	}
	if set["policy"] {
		tok.Policies = f.policies
	}
	if set["role-name"] || set["role-id"] {
		tok.Roles = f.roles()
	}
	tok.ExpirationTTL = 0
	out, _, err := c.ACL().UpdateToken(tok, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("updating ACL token %q", fset.Arg(0)), err)
	}
	return m.printToken(out, *f.asJSON, *f.tmpl)
}

func runACLTokenList(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl token list", "[options]", `
List the ACL tokens (without their secrets).`)
	asJSON := fset.Bool("json", false, "Print the tokens as JSON.")
	tmpl := fset.String("t", "", "Format the tokens with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl token list takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	ts, _, err := c.ACL().Tokens(nil)
	if err != nil {
		return m.fail("listing ACL tokens", err)
	}
	if code, done := m.printFormatted(ts, *asJSON, *tmpl); done {
		return code
	}
	if len(ts) == 0 {
		fmt.Fprintln(m.stdout, "No tokens found")
		return exitOK
	}
	rows := make([][]string, 0, len(ts))
	for _, t := range ts {
		expiry := "<none>"
		if t.ExpirationTime != nil {
			expiry = t.ExpirationTime.Format(time.RFC3339)
		}
		rows = append(rows, []string{t.Name, t.AccessorID, t.Type, fmt.Sprint(t.Global), expiry})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Name", "Accessor ID", "Type", "Global", "Expiry Time"}, rows))
	return exitOK
}

func runACLTokenInfo(m *Meta, args []string) int {
	return m.showToken(args, "acl token info", "[options] <accessor_id>", "Show an ACL token.")
}

func runACLTokenSelf(m *Meta, args []string) int {
	return m.showToken(args, "acl token self", "[options]", "Show the token the CLI uses (-token, DROVER_TOKEN or NOMAD_TOKEN).")
}

func (m *Meta) showToken(args []string, name, usage, help string) int {
	fset := m.apiFlagSet(name, usage, "\n"+help)
	asJSON := fset.Bool("json", false, "Print the token as JSON.")
	tmpl := fset.String("t", "", "Format the token with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	self := name == "acl token self"
	if (self && fset.NArg() != 0) || (!self && fset.NArg() != 1) {
		return m.usageError(fset, "wrong number of arguments")
	}
	id := "self"
	if !self {
		id = fset.Arg(0)
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	tok, _, err := c.ACL().Token(id, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL token %q", id), err)
	}
	return m.printToken(tok, *asJSON, *tmpl)
}

func runACLTokenDelete(m *Meta, args []string) int {
	return runACLDelete(m, args, aclDelete{
		cmd: "acl token delete", arg: "<accessor_id>", help: "Delete an ACL token.", what: "token accessor ID", object: "ACL token",
		del:  func(a *api.ACL, id string) error { _, err := a.DeleteToken(id, nil); return err },
		done: "Token %s successfully deleted\n",
	})
}

func (m *Meta) printRole(r *api.ACLRole, asJSON bool, tmpl string) int {
	if code, done := m.printFormatted(r, asJSON, tmpl); done {
		return code
	}
	names := make([]string, 0, len(r.Policies))
	for _, p := range r.Policies {
		names = append(names, p.Name)
	}
	fmt.Fprint(m.stdout, formatKV([]kv{{"ID", r.ID}, {"Name", r.Name}, {"Description", r.Description},
		{"Policies", strings.Join(names, ",")}, {"Create Index", fmt.Sprint(r.CreateIndex)}, {"Modify Index", fmt.Sprint(r.ModifyIndex)}}))
	return exitOK
}

func rolePolicies(names []string) []*api.ACLRolePolicyLink {
	out := make([]*api.ACLRolePolicyLink, 0, len(names))
	for _, n := range names {
		out = append(out, &api.ACLRolePolicyLink{Name: n})
	}
	return out
}

func runACLRoleCreate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl role create", "[options]", `
Create an ACL role: a named set of policies that tokens link to.`)
	name := fset.String("name", "", "The role's name (required).")
	description := fset.String("description", "", "The role's description.")
	var policies stringList
	fset.Var(&policies, "policy", "A policy of the role; repeat it for each (one at least).")
	asJSON := fset.Bool("json", false, "Print the role as JSON.")
	tmpl := fset.String("t", "", "Format the role with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl role create takes no arguments")
	}
	if *name == "" || len(policies) == 0 {
		return m.usageError(fset, "ACL role name and at least one policy are required (-name, -policy)")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	r, _, err := c.ACL().CreateRole(&api.ACLRole{Name: *name, Description: *description, Policies: rolePolicies(policies)}, nil)
	if err != nil {
		return m.fail("creating the ACL role", err)
	}
	return m.printRole(r, *asJSON, *tmpl)
}

func runACLRoleUpdate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl role update", "[options] <role_id>", `
Update an ACL role: the flags given replace what it has; -policy adds to
its policies unless -no-merge.`)
	name := fset.String("name", "", "The role's name.")
	description := fset.String("description", "", "The role's description.")
	noMerge := fset.Bool("no-merge", false, "Replace the role's policies with -policy rather than add to them.")
	var policies stringList
	fset.Var(&policies, "policy", "A policy of the role; repeat it for each.")
	asJSON := fset.Bool("json", false, "Print the role as JSON.")
	tmpl := fset.String("t", "", "Format the role with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one role ID")
	}
	set := map[string]bool{}
	fset.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	r, _, err := c.ACL().Role(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL role %q", fset.Arg(0)), err)
	}
	if set["name"] {
		r.Name = *name
	}
	if set["description"] {
		r.Description = *description
	}
	if *noMerge {
		r.Policies = rolePolicies(policies)
	} else {
		have := map[string]bool{}
		for _, p := range r.Policies {
			have[p.Name] = true
		}
		for _, p := range policies {
			if !have[p] {
				r.Policies = append(r.Policies, &api.ACLRolePolicyLink{Name: p})
			}
		}
	}
	out, _, err := c.ACL().UpdateRole(r, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("updating ACL role %q", fset.Arg(0)), err)
	}
	return m.printRole(out, *asJSON, *tmpl)
}

func runACLRoleList(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl role list", "[options]", `
List the ACL roles.`)
	asJSON := fset.Bool("json", false, "Print the roles as JSON.")
	tmpl := fset.String("t", "", "Format the roles with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl role list takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	rs, _, err := c.ACL().Roles(nil)
	if err != nil {
		return m.fail("listing ACL roles", err)
	}
	if code, done := m.printFormatted(rs, *asJSON, *tmpl); done {
		return code
	}
	if len(rs) == 0 {
		fmt.Fprintln(m.stdout, "No ACL roles found")
		return exitOK
	}
	rows := make([][]string, 0, len(rs))
	for _, r := range rs {
		names := make([]string, 0, len(r.Policies))
		for _, p := range r.Policies {
			names = append(names, p.Name)
		}
		rows = append(rows, []string{r.ID, r.Name, r.Description, strings.Join(names, ",")})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"ID", "Name", "Description", "Policies"}, rows))
	return exitOK
}

func runACLRoleInfo(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl role info", "[options] <role_id>", `
Show an ACL role, by ID (or by name with -by-name).`)
	byName := fset.Bool("by-name", false, "The argument is the role's name, not its ID.")
	asJSON := fset.Bool("json", false, "Print the role as JSON.")
	tmpl := fset.String("t", "", "Format the role with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one role ID (or name with -by-name)")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	get := c.ACL().Role
	if *byName {
		get = c.ACL().RoleByName
	}
	r, _, err := get(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL role %q", fset.Arg(0)), err)
	}
	return m.printRole(r, *asJSON, *tmpl)
}

func runACLRoleDelete(m *Meta, args []string) int {
	return runACLDelete(m, args, aclDelete{
		cmd: "acl role delete", arg: "<role_id>", help: "Delete an ACL role.", what: "role ID", object: "ACL role",
		del:  func(a *api.ACL, id string) error { _, err := a.DeleteRole(id, nil); return err },
		done: "ACL role %s successfully deleted\n",
	})
}
