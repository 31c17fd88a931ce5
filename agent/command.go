package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/drover-io/drover/client/state"
)

// shutdownTimeout bounds a graceful shutdown after a signal.
const shutdownTimeout = 30 * time.Second

const agentUsage = `Usage: drover agent [options]

  Starts the drover agent and runs until it receives an interrupt (Ctrl-C)
  or SIGTERM. The agent runs a server, a client (node agent) or both, and
  serves the HTTP API that the CLI and Nomad-compatible API clients use.

  Its configuration comes from -config files and directories (HCL or JSON,
  merged in order, later wins; see docs/agent-config.md), then from flags,
  which win over the files:

      drover agent -config /etc/drover.d
      drover agent -server -client -data-dir /var/lib/drover
      drover agent -client -servers 10.0.0.1:4647 -data-dir /var/lib/drover

  -dev starts a development agent: server and client in one process, state
  in memory, raw_exec and mock_driver enabled, everything it ran removed
  when it stops. -dev -config FILE merges FILE into the dev configuration.

  Outside -dev, tasks keep running when the agent stops and the restarted
  agent re-attaches to them. If the client state file is unusable (corrupt,
  or written by a newer drover) the agent refuses to start; -state-move-aside
  renames it so that the next start begins with empty local state.

Options:
`

// RunCommand runs `drover agent` with args (the arguments after "agent")
// and returns the process exit code. It blocks until SIGINT or SIGTERM,
// then shuts the agent down gracefully.
func RunCommand(args []string, stdout, stderr io.Writer) int {
	sigCh := make(chan os.Signal, 2)
	signal.Notify(sigCh, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigCh)
	return runCommand(args, stdout, stderr, sigCh, nil)
}

// runCommand is RunCommand with its signals injected; started, when not
// nil, receives the agent once it serves (for tests).
func runCommand(args []string, stdout, stderr io.Writer, signals <-chan os.Signal, started chan<- *Agent) int {
	cmd, err := parseFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	cfg := cmd.cfg
	if cmd.moveAside {
		return moveStateAside(cfg, stdout, stderr)
	}
	level, err := parseLogLevel(cfg.LogLevel)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	a, err := startUntilSignal(cfg, logger, signals, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "Error starting agent: %v\n", err)
		return 1
	}
	if err := a.Start(); err != nil {
		fmt.Fprintf(stderr, "Error starting agent: %v\n", err)
		if err := a.Shutdown(); err != nil {
			fmt.Fprintf(stderr, "Error shutting down: %v\n", err)
		}
		return 1
	}
	printBanner(stdout, a.cfg, a)
	if started != nil {
		started <- a
	}

	sig := <-signals
	fmt.Fprintf(stdout, "==> Caught signal: %v\n", sig)
	fmt.Fprintln(stdout, "==> Gracefully shutting down agent...")
	done := make(chan error, 1)
	go func() { done <- a.Shutdown() }()
	timeout := time.NewTimer(shutdownTimeout)
	defer timeout.Stop()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintf(stderr, "Error shutting down: %v\n", err)
			return 1
		}
	case sig := <-signals:
		fmt.Fprintf(stderr, "==> Caught second signal %v: exiting without waiting for shutdown\n", sig)
		return 1
	case <-timeout.C:
		fmt.Fprintf(stderr, "Error shutting down: timed out after %s\n", shutdownTimeout)
		return 1
	}
	fmt.Fprintln(stdout, "==> Agent stopped")
	return 0
}

// startUntilSignal runs NewAgentContext, which waits as long as the server
// needs to become leader; a signal meanwhile stops the wait and what was
// started.
func startUntilSignal(cfg *Config, logger *slog.Logger, signals <-chan os.Signal, stdout io.Writer) (*Agent, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	type result struct {
		a   *Agent
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := NewAgentContext(ctx, cfg, logger)
		done <- result{a, err}
	}()
	select {
	case r := <-done:
		return r.a, r.err
	case sig := <-signals:
		fmt.Fprintf(stdout, "==> Caught signal: %v while starting: stopping\n", sig)
		cancel(fmt.Errorf("caught signal %v", sig))
		r := <-done
		if r.a != nil {
			// It finished starting just as the signal came.
			if err := r.a.Shutdown(); err != nil {
				return nil, errors.Join(fmt.Errorf("caught signal %v", sig), err)
			}
		}
		return nil, fmt.Errorf("caught signal %v while starting", sig)
	}
}

// moveStateAside is -state-move-aside: it renames the client state file
// and exits.
func moveStateAside(cfg *Config, stdout, stderr io.Writer) int {
	if cfg.DevMode || cfg.DataDir == "" {
		fmt.Fprintf(stderr, "Error: -%s needs the agent's data_dir (-data-dir or -config), and -dev keeps no state file\n", state.MoveAsideFlag)
		return 1
	}
	dst, err := state.MoveAside(cfg.DataDir, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "==> Moved the client state file aside: %s\n", dst)
	fmt.Fprintln(stdout, "    The next agent start begins with empty client state (tasks left running are not re-attached).")
	return 0
}

// agentCommand is the parsed command line.
type agentCommand struct {
	cfg       *Config
	moveAside bool
}

// parseFlags turns the command line into a Config: the defaults (or the
// dev defaults), then the -config files in order, then the flags given.
func parseFlags(args []string, stdout, stderr io.Writer) (*agentCommand, error) {
	def := DefaultConfig()
	var (
		dev, moveAside         bool
		configs                []string
		flagVals               Config
		serverFlag, clientFlag bool
		bootstrapExpect        int
		servers                string
	)
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&dev, "dev", false, "Start in development mode: server and client in one process, state in memory,\nraw_exec and mock_driver enabled.")
	fs.Func("config", "A config file or directory (.hcl, .json); repeat it to merge several, later wins.", func(s string) error {
		configs = append(configs, s)
		return nil
	})
	fs.StringVar(&flagVals.BindAddr, "bind", def.BindAddr, "The address the agent binds its listeners to.")
	fs.IntVar(&flagVals.HTTPPort, "http-port", def.HTTPPort, "The HTTP API port; 0 picks a free port. (drover extension: Nomad sets it in\nthe config file's ports block)")
	fs.StringVar(&flagVals.DataDir, "data-dir", "", "The directory for the agent's state (required outside -dev). In -dev mode it is\noptional: without it allocation directories go to a temporary directory\nremoved at shutdown.")
	fs.StringVar(&flagVals.PluginDir, "plugin-dir", "", "The directory of external plugins.")
	fs.StringVar(&flagVals.LogLevel, "log-level", def.LogLevel, "The log level: debug, info, warn or error.")
	fs.StringVar(&flagVals.Region, "region", def.Region, "The region the agent belongs to.")
	fs.StringVar(&flagVals.Datacenter, "dc", def.Datacenter, "The datacenter of the agent.")
	fs.StringVar(&flagVals.NodeName, "node", def.NodeName, "The name of the agent (and of its client node).")
	fs.BoolVar(&serverFlag, "server", false, "Run a server.")
	fs.BoolVar(&clientFlag, "client", false, "Run a client.")
	fs.IntVar(&bootstrapExpect, "bootstrap-expect", 0, "The number of servers to wait for before bootstrapping (only 1 is supported).")
	fs.StringVar(&servers, "servers", "", "Comma-separated RPC addresses of the servers a client joins (host:4647).")
	fs.BoolVar(&moveAside, state.MoveAsideFlag, false, "Rename <data_dir>/client/state.db to state.db.corrupt-<UTC timestamp>, print the\nnew path and exit. Refused while an agent holds the file.")
	fs.Usage = func() {
		fmt.Fprint(stdout, agentUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: the agent takes only flags (see drover agent -h)", fs.Args())
	}
	cfg := DefaultConfig()
	if dev {
		cfg = DevConfig()
	}
	if err := LoadConfigFiles(cfg, configs); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "bind":
			cfg.BindAddr = flagVals.BindAddr
		case "http-port":
			cfg.HTTPPort = flagVals.HTTPPort
		case "data-dir":
			cfg.DataDir = flagVals.DataDir
		case "plugin-dir":
			cfg.PluginDir = flagVals.PluginDir
		case "log-level":
			cfg.LogLevel = flagVals.LogLevel
		case "region":
			cfg.Region = flagVals.Region
		case "dc":
			cfg.Datacenter = flagVals.Datacenter
		case "node":
			cfg.NodeName = flagVals.NodeName
		case "server":
			cfg.Server.Enabled = serverFlag
		case "client":
			cfg.Client.Enabled = clientFlag
		case "bootstrap-expect":
			cfg.Server.BootstrapExpect = bootstrapExpect
		case "servers":
			cfg.Client.Servers = nil
			for _, s := range strings.Split(servers, ",") {
				if s = strings.TrimSpace(s); s != "" {
					cfg.Client.Servers = append(cfg.Client.Servers, s)
				}
			}
		}
	})
	if cfg.HTTPPort < 0 || cfg.HTTPPort > 65535 {
		return nil, fmt.Errorf("-http-port %d is out of range [0, 65535]", cfg.HTTPPort)
	}
	if _, err := parseLogLevel(cfg.LogLevel); err != nil {
		return nil, err
	}
	if !moveAside {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
	} else if cfg.DataDir != "" {
		if abs, err := filepath.Abs(cfg.DataDir); err == nil {
			cfg.DataDir = abs
		}
	}
	return &agentCommand{cfg: cfg, moveAside: moveAside}, nil
}

// parseLogLevel maps -log-level to a slog level.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug", "trace":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error", "err":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("-log-level %q is invalid: use debug, info, warn or error", s)
}

// printBanner prints the agent's configuration once it serves.
func printBanner(w io.Writer, cfg *Config, a *Agent) {
	mode := ""
	if cfg.DevMode {
		mode = " (development mode: state is in memory and lost at shutdown)"
	}
	fmt.Fprintf(w, "==> drover agent configuration%s:\n\n", mode)
	rows := [][2]string{
		{"HTTP address", "http://" + a.HTTPAddr()},
		{"Version", Version},
		{"Region", fmt.Sprintf("%s (datacenter: %s)", cfg.Region, cfg.Datacenter)},
		{"Server", fmt.Sprint(a.ServerEnabled())},
		{"Client", fmt.Sprint(a.ClientEnabled())},
		{"Node name", cfg.NodeName},
		{"Node ID", a.NodeID()},
		{"Log level", strings.ToUpper(cfg.LogLevel)},
	}
	if a.rpcServer != nil {
		rows = append(rows, [2]string{"RPC address", a.RPCAddr()})
	}
	if cfg.DataDir != "" {
		rows = append(rows, [2]string{"Data dir", cfg.DataDir})
	}
	if len(cfg.Client.Servers) > 0 {
		rows = append(rows, [2]string{"Servers", strings.Join(cfg.Client.Servers, ", ")})
	}
	if len(cfg.Plugins) > 0 {
		rows = append(rows, [2]string{"Plugins", cfg.describePlugins()})
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%16s: %s\n", r[0], r[1])
	}
	fmt.Fprintln(w, "\n==> drover agent started! Log data will stream in below:")
}
