package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
)

// authMethodFlags are the flags of auth-method create and update.
type authMethodFlags struct {
	name, typ, locality, maxTTL, nameFormat, config *string
	isDefault                                       *bool
	asJSON                                          *bool
	tmpl                                            *string
}

func addAuthMethodFlags(fset *flagSet) *authMethodFlags {
	return &authMethodFlags{
		name:       fset.String("name", "", "The auth method's name (create only; update takes it as argument)."),
		typ:        fset.String("type", "", `The auth method's type: "JWT" (or "OIDC", stored but not usable for logins).`),
		locality:   fset.String("token-locality", "", `The locality of the tokens its logins make: "local" or "global".`),
		maxTTL:     fset.String("max-token-ttl", "", `The lifetime of the tokens its logins make ("1h"; between 1m and 24h).`),
		nameFormat: fset.String("token-name-format", "", "The name of the tokens its logins make; default ${auth_method_type}-${auth_method_name}."),
		config:     fset.String("config", "", "The auth method's config as JSON, or @FILE holding it (Nomad's ACLAuthMethodConfig)."),
		isDefault:  fset.Bool("default", false, "Make it the auth method `acl login` uses when none is named."),
		asJSON:     fset.Bool("json", false, "Print the auth method as JSON."),
		tmpl:       fset.String("t", "", "Format the auth method with this Go template."),
	}
}

// apply sets on m the flags the user gave.
func (f *authMethodFlags) apply(m *Meta, fset *flagSet, am *api.ACLAuthMethod) error {
	set := map[string]bool{}
	fset.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["type"] {
		am.Type = *f.typ
	}
	if set["token-locality"] {
		am.TokenLocality = *f.locality
	}
	if set["token-name-format"] {
		am.TokenNameFormat = *f.nameFormat
	}
	if set["default"] {
		am.Default = *f.isDefault
	}
	if set["max-token-ttl"] {
		d, err := time.ParseDuration(*f.maxTTL)
		if err != nil {
			return fmt.Errorf("-max-token-ttl=%q is not a duration (e.g. 1h)", *f.maxTTL)
		}
		am.MaxTokenTTL = d
	}
	if set["config"] {
		raw := []byte(*f.config)
		if strings.HasPrefix(*f.config, "@") {
			b, err := m.readArg(strings.TrimPrefix(*f.config, "@"))
			if err != nil {
				return fmt.Errorf("read -config: %w", err)
			}
			raw = b
		}
		var cfg api.ACLAuthMethodConfig
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return fmt.Errorf("-config is not an auth method config in JSON: %w", err)
		}
		am.Config = &cfg
	}
	return nil
}

func (m *Meta) printAuthMethod(am *api.ACLAuthMethod, asJSON bool, tmpl string) int {
	if code, done := m.printFormatted(am, asJSON, tmpl); done {
		return code
	}
	fmt.Fprint(m.stdout, formatKV([]kv{
		{"Name", am.Name}, {"Type", am.Type}, {"Locality", am.TokenLocality}, {"Max Token TTL", am.MaxTokenTTL.String()},
		{"Token Name Format", am.TokenNameFormat}, {"Default", fmt.Sprint(am.Default)},
		{"Create Index", fmt.Sprint(am.CreateIndex)}, {"Modify Index", fmt.Sprint(am.ModifyIndex)},
	}))
	if am.Config != nil {
		b, err := json.MarshalIndent(am.Config, "", "  ")
		if err == nil {
			fmt.Fprintf(m.stdout, "\nAuth Method Config\n\n%s\n", b)
		}
	}
	return exitOK
}

func runACLAuthMethodCreate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl auth-method create", "[options]", `
Create an ACL auth method: how "acl login" validates a JWT of an identity
provider (static public keys or a JWKS URL, bound audiences and issuers,
claim mappings). Binding rules then say what its logins get.`)
	f := addAuthMethodFlags(fset)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl auth-method create takes no arguments")
	}
	if *f.name == "" || *f.typ == "" || *f.locality == "" || *f.maxTTL == "" || *f.config == "" {
		return m.usageError(fset, "-name, -type, -token-locality, -max-token-ttl and -config are required")
	}
	am := &api.ACLAuthMethod{Name: *f.name}
	if err := f.apply(m, fset, am); err != nil {
		return m.usageError(fset, err.Error())
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	out, _, err := c.ACL().CreateAuthMethod(am, nil)
	if err != nil {
		return m.fail("creating the ACL auth method", err)
	}
	return m.printAuthMethod(out, *f.asJSON, *f.tmpl)
}

func runACLAuthMethodUpdate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl auth-method update", "[options] <name>", `
Update an ACL auth method: the flags given replace what it has.`)
	f := addAuthMethodFlags(fset)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one auth method name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	am, _, err := c.ACL().AuthMethod(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL auth method %q", fset.Arg(0)), err)
	}
	if err := f.apply(m, fset, am); err != nil {
		return m.usageError(fset, err.Error())
	}
	out, _, err := c.ACL().UpdateAuthMethod(am, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("updating ACL auth method %q", fset.Arg(0)), err)
	}
	return m.printAuthMethod(out, *f.asJSON, *f.tmpl)
}

func runACLAuthMethodList(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl auth-method list", "[options]", `
List the ACL auth methods.`)
	asJSON := fset.Bool("json", false, "Print the auth methods as JSON.")
	tmpl := fset.String("t", "", "Format the auth methods with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl auth-method list takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	ms, _, err := c.ACL().AuthMethods(nil)
	if err != nil {
		return m.fail("listing ACL auth methods", err)
	}
	if code, done := m.printFormatted(ms, *asJSON, *tmpl); done {
		return code
	}
	if len(ms) == 0 {
		fmt.Fprintln(m.stdout, "No ACL auth methods found")
		return exitOK
	}
	rows := make([][]string, 0, len(ms))
	for _, am := range ms {
		rows = append(rows, []string{am.Name, am.Type, fmt.Sprint(am.Default)})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"Name", "Type", "Default"}, rows))
	return exitOK
}

func runACLAuthMethodInfo(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl auth-method info", "[options] <name>", `
Show an ACL auth method and its config.`)
	asJSON := fset.Bool("json", false, "Print the auth method as JSON.")
	tmpl := fset.String("t", "", "Format the auth method with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one auth method name")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	am, _, err := c.ACL().AuthMethod(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL auth method %q", fset.Arg(0)), err)
	}
	return m.printAuthMethod(am, *asJSON, *tmpl)
}

func runACLAuthMethodDelete(m *Meta, args []string) int {
	return runACLDelete(m, args, aclDelete{
		cmd: "acl auth-method delete", arg: "<name>", help: "Delete an ACL auth method and its binding rules.",
		what: "auth method name", object: "ACL auth method",
		del:  func(a *api.ACL, id string) error { _, err := a.DeleteAuthMethod(id, nil); return err },
		done: "ACL auth method %s successfully deleted\n",
	})
}

// bindingRuleFlags are the flags of binding-rule create and update.
type bindingRuleFlags struct {
	method, description, selector, bindType, bindName *string
	asJSON                                            *bool
	tmpl                                              *string
}

func addBindingRuleFlags(fset *flagSet) *bindingRuleFlags {
	return &bindingRuleFlags{
		method:      fset.String("auth-method", "", "The auth method whose logins the rule binds (create only)."),
		description: fset.String("description", "", "The rule's description."),
		selector:    fset.String("selector", "", `A boolean expression over the login's mapped claims ("engineering in list.groups"); empty: every login.`),
		bindType:    fset.String("bind-type", "", `What a matching login gets: "role", "policy" or "management".`),
		bindName:    fset.String("bind-name", "", "The role or policy, by name; may use ${value.<claim>}."),
		asJSON:      fset.Bool("json", false, "Print the binding rule as JSON."),
		tmpl:        fset.String("t", "", "Format the binding rule with this Go template."),
	}
}

func (f *bindingRuleFlags) apply(fset *flagSet, r *api.ACLBindingRule) {
	fset.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "description":
			r.Description = *f.description
		case "selector":
			r.Selector = *f.selector
		case "bind-type":
			r.BindType = *f.bindType
		case "bind-name":
			r.BindName = *f.bindName
		}
	})
}

func (m *Meta) printBindingRule(r *api.ACLBindingRule, asJSON bool, tmpl string) int {
	if code, done := m.printFormatted(r, asJSON, tmpl); done {
		return code
	}
	fmt.Fprint(m.stdout, formatKV([]kv{
		{"ID", r.ID}, {"Description", r.Description}, {"Auth Method", r.AuthMethod}, {"Selector", fmt.Sprintf("%q", r.Selector)},
		{"Bind Type", r.BindType}, {"Bind Name", r.BindName},
		{"Create Index", fmt.Sprint(r.CreateIndex)}, {"Modify Index", fmt.Sprint(r.ModifyIndex)},
	}))
	return exitOK
}

func runACLBindingRuleCreate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl binding-rule create", "[options]", `
Create an ACL binding rule: the logins of its auth method whose claims
match its selector get its role, its policy or management.`)
	f := addBindingRuleFlags(fset)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl binding-rule create takes no arguments")
	}
	if *f.method == "" || *f.bindType == "" {
		return m.usageError(fset, "-auth-method and -bind-type are required")
	}
	r := &api.ACLBindingRule{AuthMethod: *f.method}
	f.apply(fset, r)
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	out, _, err := c.ACL().CreateBindingRule(r, nil)
	if err != nil {
		return m.fail("creating the ACL binding rule", err)
	}
	return m.printBindingRule(out, *f.asJSON, *f.tmpl)
}

func runACLBindingRuleUpdate(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl binding-rule update", "[options] <id>", `
Update an ACL binding rule: the flags given replace what it has.`)
	f := addBindingRuleFlags(fset)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one binding rule ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	r, _, err := c.ACL().BindingRule(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL binding rule %q", fset.Arg(0)), err)
	}
	f.apply(fset, r)
	out, _, err := c.ACL().UpdateBindingRule(r, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("updating ACL binding rule %q", fset.Arg(0)), err)
	}
	return m.printBindingRule(out, *f.asJSON, *f.tmpl)
}

func runACLBindingRuleList(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl binding-rule list", "[options]", `
List the ACL binding rules.`)
	asJSON := fset.Bool("json", false, "Print the binding rules as JSON.")
	tmpl := fset.String("t", "", "Format the binding rules with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl binding-rule list takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	rs, _, err := c.ACL().BindingRules(nil)
	if err != nil {
		return m.fail("listing ACL binding rules", err)
	}
	if code, done := m.printFormatted(rs, *asJSON, *tmpl); done {
		return code
	}
	if len(rs) == 0 {
		fmt.Fprintln(m.stdout, "No ACL binding rules found")
		return exitOK
	}
	rows := make([][]string, 0, len(rs))
	for _, r := range rs {
		rows = append(rows, []string{r.ID, r.Description, r.AuthMethod})
	}
	fmt.Fprint(m.stdout, formatTable([]string{"ID", "Description", "Auth Method"}, rows))
	return exitOK
}

func runACLBindingRuleInfo(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl binding-rule info", "[options] <id>", `
Show an ACL binding rule.`)
	asJSON := fset.Bool("json", false, "Print the binding rule as JSON.")
	tmpl := fset.String("t", "", "Format the binding rule with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give one binding rule ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	r, _, err := c.ACL().BindingRule(fset.Arg(0), nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading ACL binding rule %q", fset.Arg(0)), err)
	}
	return m.printBindingRule(r, *asJSON, *tmpl)
}

func runACLBindingRuleDelete(m *Meta, args []string) int {
	return runACLDelete(m, args, aclDelete{
		cmd: "acl binding-rule delete", arg: "<id>", help: "Delete an ACL binding rule.",
		what: "binding rule ID", object: "ACL binding rule",
		del:  func(a *api.ACL, id string) error { _, err := a.DeleteBindingRule(id, nil); return err },
		done: "ACL binding rule %s successfully deleted\n",
	})
}

func runACLLogin(m *Meta, args []string) int {
	fset := m.apiFlagSet("acl login", "[options]", `
Log in with a JWT auth method: the identity provider's JWT (-login-token)
is exchanged for a new ACL token, whose secret is printed (give it to the
CLI as DROVER_TOKEN or NOMAD_TOKEN). The browser flow of OIDC auth methods
is not supported.`)
	method := fset.String("method", "", "The auth method to log in with; default: the default auth method.")
	typ := fset.String("type", "", `The auth method's type: "JWT" (optional; "OIDC" is refused).`)
	loginToken := fset.String("login-token", "", "The identity provider's JWT (or @FILE holding it, or - for stdin).")
	asJSON := fset.Bool("json", false, "Print the token as JSON.")
	tmpl := fset.String("t", "", "Format the token with this Go template.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "acl login takes no arguments")
	}
	if strings.EqualFold(*typ, "OIDC") {
		fmt.Fprintln(m.stderr, "Error: OIDC logins (the browser flow) are not supported by drover: use a JWT auth method with -login-token")
		return exitError
	}
	if *loginToken == "" {
		return m.usageError(fset, "-login-token is required (the JWT of your identity provider)")
	}
	jwt := *loginToken
	if jwt == "-" || strings.HasPrefix(jwt, "@") {
		b, err := m.readArg(strings.TrimPrefix(jwt, "@"))
		if err != nil {
			fmt.Fprintf(m.stderr, "Error reading the login token: %v\n", err)
			return exitError
		}
		jwt = strings.TrimSpace(string(b))
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	tok, _, err := c.ACL().Login(&api.ACLLoginRequest{AuthMethodName: *method, LoginToken: jwt}, nil)
	if err != nil {
		return m.fail("logging in", err)
	}
	if !*asJSON && *tmpl == "" {
		fmt.Fprintln(m.stdout, "Successfully logged in via JWT")
		fmt.Fprintln(m.stdout)
	}
	return m.printToken(tok, *asJSON, *tmpl)
}

func runACLPolicySelf(m *Meta, args []string) int {
	return runPolicyList(m, args, policyListing{
		name: "acl policy self", help: "List the policies the CLI's token holds, directly and through its roles.",
		doing: "listing the token's policies",
		empty: "No policies found (a management token holds none: it may do everything)",
		fetch: func(c *api.Client) ([]*api.ACLPolicyListStub, error) {
			ps, _, err := c.ACL().PoliciesSelf(nil)
			return ps, err
		},
	})
}
