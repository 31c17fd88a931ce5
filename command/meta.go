package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/drover-io/drover/api"
)

// Meta is what every command shares: its output streams, its dependencies
// and the connection options set by flags.
type Meta struct {
	stdout io.Writer
	stderr io.Writer
	deps

	// address and namespace are set by the global or per-command flags;
	// empty means "from the environment".
	address   string
	namespace string
	// tls are the TLS flags (meta_tls.go); empty means "from the
	// environment".
	tls tlsFlags
	// token is the -token flag: the ACL token's secret ID; empty means
	// DROVER_TOKEN or NOMAD_TOKEN.
	token string
}

func newMeta(stdout, stderr io.Writer, d deps) *Meta {
	return &Meta{stdout: stdout, stderr: stderr, deps: d}
}

// flagSet is a command's flags plus what its help shows.
type flagSet struct {
	*flag.FlagSet
	name string // "job run"
	args string // "[options] <file>"
	help string // the description
}

// flagSet returns the flags of command name, taking args and described by help.
func (m *Meta) flagSet(name, args, help string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, name: name, args: args, help: help}
}

// apiFlagSet is flagSet plus the flags of commands that talk to an agent.
func (m *Meta) apiFlagSet(name, args, help string) *flagSet {
	fs := m.flagSet(name, args, help)
	fs.StringVar(&m.address, "address", m.address,
		"The agent's HTTP address. Overrides DROVER_ADDR and NOMAD_ADDR; default http://127.0.0.1:4646.")
	fs.StringVar(&m.namespace, "namespace", m.namespace,
		"The namespace to use. Overrides DROVER_NAMESPACE and NOMAD_NAMESPACE.")
	m.tls.register(fs.FlagSet) // meta_tls.go
	fs.StringVar(&m.token, "token", m.token,
		"The ACL token's secret ID. Overrides DROVER_TOKEN and NOMAD_TOKEN.")
	return fs
}

// parse parses args. When done is true the command must return code: -h
// printed the help (0), or the flags were wrong (1).
func (m *Meta) parse(fs *flagSet, args []string) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp(m.stdout)
		return 0, true
	default:
		fmt.Fprintf(m.stderr, "Error: %v\n\n", err)
		fs.printHelp(m.stderr)
		return 1, true
	}
}

// usageError reports wrong positional arguments.
func (m *Meta) usageError(fs *flagSet, msg string) int {
	fmt.Fprintf(m.stderr, "Error: %s\n\n", msg)
	fs.printHelp(m.stderr)
	return 1
}

func (fs *flagSet) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: drover %s %s\n\n", fs.name, fs.args)
	for _, line := range strings.Split(strings.TrimSpace(fs.help), "\n") {
		if line == "" {
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "  %s\n", line)
	}
	var n int
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nOptions:\n\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// addressSetting returns the agent address in force and where it came from.
func (m *Meta) addressSetting() string {
	if m.address != "" {
		return m.address
	}
	for _, k := range []string{"DROVER_ADDR", "NOMAD_ADDR"} {
		if v := m.getenv(k); v != "" {
			return v
		}
	}
	return api.DefaultAddress
}

// client returns an API client for the agent the flags and environment name.
func (m *Meta) client() (*api.Client, error) {
	ns := m.namespace
	for _, k := range []string{"DROVER_NAMESPACE", "NOMAD_NAMESPACE"} {
		if ns == "" {
			ns = m.getenv(k)
		}
	}
	token := m.token
	for _, k := range []string{"DROVER_TOKEN", "NOMAD_TOKEN"} {
		if token == "" {
			token = m.getenv(k)
		}
	}
	c, err := api.NewClient(&api.Config{Address: m.addressSetting(), Namespace: ns, SecretID: token, TLSConfig: m.tlsConfig()})
	if err != nil {
		return nil, fmt.Errorf("%w (set -address or DROVER_ADDR to the agent's address, e.g. http://127.0.0.1:4646)", err)
	}
	return c, nil
}

// apiClient is client() for commands: on error it prints it and returns nil.
func (m *Meta) apiClient() *api.Client {
	c, err := m.client()
	if err != nil {
		fmt.Fprintf(m.stderr, "Error: %v\n", err)
		return nil
	}
	return c
}

// fail prints "Error <doing>: <why>" for err and returns exit code 1. A
// failure to connect says how to reach an agent; an error answer from the
// agent shows the agent's message.
func (m *Meta) fail(doing string, err error) int {
	fmt.Fprintln(m.stderr, errorText(doing, err))
	return 1
}

// errorText renders an API error for people.
func errorText(doing string, err error) string {
	if text, ok := tlsErrorText(doing, err); ok { // meta_tls.go
		return text
	}
	var ce *api.ConnectError
	if errors.As(err, &ce) {
		return fmt.Sprintf("Error %s: cannot reach the drover agent at %s: is `drover agent -dev` running? Set -address or DROVER_ADDR.\n  (%v)",
			doing, ce.Address, rootCause(ce.Err))
	}
	return fmt.Sprintf("Error %s: %s", doing, api.ErrorMessage(err))
}

// rootCause strips the wrapping of an HTTP transport error down to the
// part that names the problem ("dial tcp ...: connection refused").
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		// Keep the *net.OpError level, which names the address and the cause.
		if strings.HasPrefix(err.Error(), "dial ") {
			return err
		}
		err = u
	}
}
