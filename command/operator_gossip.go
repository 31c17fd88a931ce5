package command

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/drover-io/drover/api"
)

// runGossipKeyring is `operator gossip keyring -list|-install K|-use K|-remove K`
// (Nomad's flag form); the subcommands below are its other form.
func runGossipKeyring(m *Meta, args []string) int {
	return gossipKeyring(m, "operator gossip keyring", args)
}

// runOperatorKeyring is `operator keyring`, Nomad's older name of it.
func runOperatorKeyring(m *Meta, args []string) int {
	return gossipKeyring(m, "operator keyring", args)
}

func gossipKeyring(m *Meta, name string, args []string) int {
	fset := m.apiFlagSet(name, "[options]", `
Manage the servers' gossip encryption keys (server.encrypt): list them,
install a new one on every server, make it the one in use, and remove the
old one. The servers keep the keyring in <data_dir>/server/serf/serf.keyring
(beside serf's snapshot): it survives restarts and, once written, takes
precedence over server.encrypt. Exactly one of the options.`)
	list := fset.Bool("list", false, "List the keys and how many servers hold each.")
	install := fset.String("install", "", "Install a key (base64 of 16, 24 or 32 bytes) on every server.")
	use := fset.String("use", "", "Make an installed key the one that encrypts.")
	remove := fset.String("remove", "", "Remove a key that is not in use.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	n := 0
	for _, set := range []bool{*list, *install != "", *use != "", *remove != ""} {
		if set {
			n++
		}
	}
	if n != 1 || fset.NArg() != 0 {
		return m.usageError(fset, "give exactly one of -list, -install, -use or -remove")
	}
	switch {
	case *install != "":
		return m.gossipKeyringOp("install", *install)
	case *use != "":
		return m.gossipKeyringOp("use", *use)
	case *remove != "":
		return m.gossipKeyringOp("remove", *remove)
	}
	return m.gossipKeyringList()
}

func runGossipKeyringList(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator gossip keyring list", "[options]", `
List the servers' gossip encryption keys and how many servers hold each.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "operator gossip keyring list takes no arguments")
	}
	return m.gossipKeyringList()
}

func gossipKeyringOpCommand(op, help string) func(*Meta, []string) int {
	return func(m *Meta, args []string) int {
		fset := m.apiFlagSet("operator gossip keyring "+op, "[options] <key>", "\n"+help)
		if code, done := m.parse(fset, args); done {
			return code
		}
		if fset.NArg() != 1 {
			return m.usageError(fset, "give one key (base64 of 16, 24 or 32 bytes)")
		}
		return m.gossipKeyringOp(op, fset.Arg(0))
	}
}

func runGossipKeyringGenerate(m *Meta, args []string) int {
	fset := m.flagSet("operator gossip keyring generate", "[options]", `
Print a new gossip encryption key: base64 of random bytes, for
server.encrypt or operator gossip keyring install.`)
	size := fset.Int("bytes", 32, "The key's length in bytes: 16, 24 or 32.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if (*size != 16 && *size != 24 && *size != 32) || fset.NArg() != 0 {
		return m.usageError(fset, "-bytes must be 16, 24 or 32, and there are no arguments")
	}
	b := make([]byte, *size)
	if _, err := rand.Read(b); err != nil {
		fmt.Fprintf(m.stderr, "Error reading random bytes: %v\n", err)
		return exitError
	}
	fmt.Fprintln(m.stdout, base64.StdEncoding.EncodeToString(b))
	return exitOK
}

func (m *Meta) gossipKeyringList() int {
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	fmt.Fprintln(m.stdout, "==> Gathering installed encryption keys...")
	r, err := c.Agent().ListKeys()
	if err != nil {
		return m.fail("listing the gossip keys", err)
	}
	keys := make([]string, 0, len(r.Keys))
	for k := range r.Keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, []string{k, fmt.Sprintf("%d/%d", r.Keys[k], r.NumNodes)})
	}
	fmt.Fprintln(m.stdout)
	fmt.Fprint(m.stdout, formatTable([]string{"Key", "Servers"}, rows))
	return exitOK
}

func (m *Meta) gossipKeyringOp(op, key string) int {
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	var (
		do   func(string) (*api.KeyringResponse, error)
		verb string
	)
	switch op {
	case "install":
		do, verb = c.Agent().InstallKey, "Installing new gossip encryption key"
	case "use":
		do, verb = c.Agent().UseKey, "Changing primary gossip encryption key"
	default:
		do, verb = c.Agent().RemoveKey, "Removing gossip encryption key"
	}
	fmt.Fprintf(m.stdout, "==> %s...\n", verb)
	if _, err := do(key); err != nil {
		return m.fail(op+" of the gossip key", err)
	}
	fmt.Fprintln(m.stdout, "==> Done")
	return exitOK
}
