package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/client/template"
)

// shutdownTimeout bounds a graceful shutdown after a signal.
const shutdownTimeout = 30 * time.Second

const agentUsage = `Usage: drover agent [options]

  Starts the drover agent and runs until it receives an interrupt (Ctrl-C)
  or SIGTERM. The agent runs a server, a client (node agent) or both, and
  serves the HTTP API that the CLI and Nomad-compatible API clients use.

  Its configuration comes from -config files and directories (HCL or JSON,
  merged in order, later wins; see docs/agent-config.md), then from flags,
  which win over the files. The flags are Nomad's: a Nomad setting drover
  does not have is accepted and logged once as ignored.

      drover agent -config /etc/drover.d
      drover agent -server -client -data-dir /var/lib/drover
      drover agent -client -servers 10.0.0.1:4647 -data-dir /var/lib/drover
      drover agent -dev -meta rack=r1 -node-class batch

  -dev starts a development agent: server and client in one process, state
  in memory, raw_exec and mock_driver enabled, everything it ran removed
  when it stops. -dev -config FILE merges FILE into the dev configuration.

  Outside -dev, tasks keep running when the agent stops and the restarted
  agent re-attaches to them. If the client state file is unusable (corrupt,
  or written by a newer drover) the agent refuses to start; -state-move-aside
  renames it so that the next start begins with empty local state.
`

// RunCommand runs `drover agent` with args (the arguments after "agent")
// and returns the process exit code. It blocks until SIGINT or SIGTERM,
// then shuts the agent down gracefully. SIGHUP reloads the TLS
// certificates (Agent.Reload).
func RunCommand(args []string, stdout, stderr io.Writer) int {
	sigCh := make(chan os.Signal, 2)
	signal.Notify(sigCh, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
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
	logger, sinks, err := newLogger(cfg, stderr, nil, nil)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	defer func() {
		if err := sinks.Close(); err != nil {
			fmt.Fprintf(stderr, "Error closing the logs: %v\n", err)
		}
	}()
	// consul-template, which renders the tasks' templates, logs with the
	// standard library's log package: its lines join the agent's log.
	log.SetFlags(0)
	log.SetOutput(template.LogWriter(logger.With("component", "template")))
	for _, w := range cfg.Warnings {
		logger.Warn("drover ignores this Nomad setting", "key", w.Key, "at", w.Where, "reason", w.Reason)
	}

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
	for sig == syscall.SIGHUP {
		fmt.Fprintln(stdout, "==> Caught signal: hangup: reloading the TLS certificates")
		if err := a.Reload(); err != nil {
			logger.Error("reload failed: the former certificates stay in force", "error", err)
		}
		sig = <-signals
	}
	fmt.Fprintf(stdout, "==> Caught signal: %v\n", sig)
	if leaveOnSignal(cfg, sig) {
		fmt.Fprintln(stdout, "==> Leaving the cluster before stopping (leave_on_interrupt / leave_on_terminate)...")
		a.Leave()
	}
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
	var sig os.Signal
	for sig == nil || sig == syscall.SIGHUP {
		select {
		case r := <-done:
			return r.a, r.err
		case sig = <-signals:
			// A hangup while starting has nothing to reload yet.
		}
	}
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

// leaveOnSignal reports whether sig asks the agent to leave the cluster
// before it stops: SIGINT with leave_on_interrupt, SIGTERM with
// leave_on_terminate.
func leaveOnSignal(cfg *Config, sig os.Signal) bool {
	switch sig {
	case os.Interrupt:
		return cfg.LeaveOnInterrupt
	case syscall.SIGTERM:
		return cfg.LeaveOnTerminate
	}
	return false
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
	fmt.Fprintln(stdout, "    The next agent start begins with empty client state as a new node, and stops the tasks left running (it cannot re-attach to them).")
	return 0
}

// agentCommand is the parsed command line.
type agentCommand struct {
	cfg       *Config
	moveAside bool
}

// parseFlags turns the command line into a Config: the defaults (or the
// dev defaults), then the -config files in order, then the flags given, in
// their order.
func parseFlags(args []string, stdout, stderr io.Writer) (*agentCommand, error) {
	flags := agentFlags(DefaultConfig())
	var uses []flagUse
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, f := range flags {
		fs.Var(flagValue{flag: f, uses: &uses}, f.name, f.usage)
	}
	fs.Usage = func() {
		fmt.Fprint(stdout, agentUsage)
		writeFlagHelp(stdout, flags)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: the agent takes only flags (see drover agent -h)", fs.Args())
	}
	var (
		dev, moveAside bool
		configs        []string
	)
	for _, u := range uses {
		switch u.flag.name {
		case flagConfig:
			configs = append(configs, u.value)
		case flagDev, flagDevConnect, flagDevConsul, flagDevVault:
			dev = dev || u.value == "true"
		case state.MoveAsideFlag:
			moveAside = u.value == "true"
		}
	}
	cfg := DefaultConfig()
	if dev {
		cfg = DevConfig()
	}
	if err := LoadConfigFiles(cfg, configs); err != nil {
		return nil, err
	}
	if err := applyFlags(cfg, uses); err != nil {
		return nil, err
	}
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
		{"HTTP address", a.httpScheme() + "://" + a.HTTPAddr()},
		{"Version", Version},
		{"Region", fmt.Sprintf("%s (datacenter: %s)", cfg.Region, cfg.Datacenter)},
		{"Server", fmt.Sprint(a.ServerEnabled())},
		{"Client", fmt.Sprint(a.ClientEnabled())},
		{"Node name", cfg.NodeName},
		{"Node ID", a.NodeID()},
		{"Log level", strings.ToUpper(cfg.LogLevel)},
	}
	if a.server != nil && !cfg.DevMode {
		rows = append(rows, [2]string{"RPC address", a.RPCAddr()})
		rows = append(rows, [2]string{"Serf port", fmt.Sprint(cfg.SerfPort)})
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
