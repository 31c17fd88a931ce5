package command

import (
	"fmt"

	"github.com/drover-io/drover/api"
)

func runKeyringList(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator root keyring list", "[options]", `
List the keyring's root keys: the active one encrypts new variable
writes; inactive ones still decrypt what they encrypted.`)
	verbose := fset.Bool("verbose", false, "Show full key IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	keys, _, err := c.Operator().Keyring().List(nil)
	if err != nil {
		return m.fail("listing the root keys", err)
	}
	if len(keys) == 0 {
		fmt.Fprintln(m.stdout, "No root keys found")
		return exitOK
	}
	fmt.Fprint(m.stdout, formatRootKeys(keys, *verbose))
	return exitOK
}

func formatRootKeys(keys []*api.RootKeyMeta, verbose bool) string {
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, []string{shortID(k.KeyID, verbose), k.State, formatUnixNano(k.CreateTime)})
	}
	return formatTable([]string{"Key", "State", "Create Time"}, rows)
}

func runKeyringRotate(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator root keyring rotate", "[options]", `
Make a new root key, active from now on: new variable writes are
encrypted with it, and the former key stays to decrypt the others. With
-full, every variable is encrypted again with the new key, after which
the former keys can be removed.`)
	full := fset.Bool("full", false, "Encrypt every variable again with the new key.")
	verbose := fset.Bool("verbose", false, "Show the full key ID.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	key, _, err := c.Operator().Keyring().Rotate(*full, nil)
	if err != nil {
		return m.fail("rotating the keyring", err)
	}
	fmt.Fprint(m.stdout, formatRootKeys([]*api.RootKeyMeta{key}, *verbose))
	return exitOK
}

func runKeyringRemove(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator root keyring remove", "[options] <key ID>", `
Remove an inactive root key. A key that variables are still encrypted
with is removed only with -force, and those variables become unreadable:
rotate with -full first to encrypt them with the active key.`)
	force := fset.Bool("force", false, "Remove the key even if variables are encrypted with it.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the ID of the key to remove (see `drover operator root keyring list -verbose`)")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	id := fset.Arg(0)
	if _, err := c.Operator().Keyring().Delete(id, *force, nil); err != nil {
		return m.fail(fmt.Sprintf("removing root key %s", id), err)
	}
	fmt.Fprintf(m.stdout, "Removed root key %s\n", id)
	return exitOK
}
